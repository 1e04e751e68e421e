import htm from 'htm';
import { h } from 'preact';

/** preact's `h` as tagged templates: the page's markup, without a compile step for JSX. */
export const html = htm.bind(h);

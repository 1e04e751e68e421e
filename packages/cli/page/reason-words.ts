// What the page says of a license that is not valid: the one table of the reasons' words
// (reason-words.json, which the JUCE module's panel reads too), filled for the page.
import REASON_WORDS from './reason-words.json';

/** The values a reason's words are filled with, each in its place: what fills one is never read as another. */
function fillWords(template: string, values: { code: string; vendor: string; reason: string }): string {
  return template.replace(/\{(code|vendor|reason)\}/g, (_, key: keyof typeof values) => values[key]);
}

/**
 * What the page says of a license that is not valid, from the one table of the reasons' words,
 * reason-words.json (the JUCE module's panel says the same, from the header made of it). The card
 * shows the code and the page knows no vendor's name: {code} is nothing, {vendor} "the vendor".
 */
export function reasonWords(reason: string | null): string {
  const known = reason !== null && reason !== 'other' && Object.prototype.hasOwnProperty.call(REASON_WORDS, reason);
  const template = known ? REASON_WORDS[reason as keyof typeof REASON_WORDS] : REASON_WORDS.other;
  return fillWords(template, { code: '', vendor: 'the vendor', reason: reason ?? 'no reason given' });
}

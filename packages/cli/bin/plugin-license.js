#!/usr/bin/env node
// A launcher that exists before any build, so package managers can link the bin at install time.
import '../dist/cli.js';

#!/usr/bin/env node
// The built command line; `npm install` builds dist/ (the `prepare` script).
import '../dist/cli/index.js';

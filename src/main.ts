import { runServe } from './cli/serve.js';

// `npm start`: the public API (and the internal one when ADMIN_TOKEN is set), seeding a demo
// store on an empty database outside production.
await runServe({ seedDemo: true });

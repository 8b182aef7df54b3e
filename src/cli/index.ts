import { ConfigError } from '../config/config.js';
import { isAppError } from '../errors/app-error.js';
import { openDatabase } from '../store/factory.js';
import { runCommand, USAGE, UsageError } from './commands.js';
import { runServe } from './serve.js';

/**
 * The `price-export` command line (CONTRACT §9), and its composition module: the one place of
 * the CLI that picks the store factory. Errors go to stderr: 1 refused, 2 bad usage or configuration.
 */
async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === 'serve') {
    await runServe({ seedDemo: false });
    return -1; // keeps running
  }
  return runCommand(argv, {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stderr.isTTY),
  }, (config) => openDatabase(config.databaseUrl, { startThreads: false, poolSize: config.databasePoolSize }));
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (error) {
  if (error instanceof ConfigError || error instanceof UsageError) {
    process.stderr.write(`price-export: ${error.message}\n`);
    process.exitCode = 2;
  } else if (isAppError(error)) {
    process.stderr.write(`price-export: ${error.code}: ${error.detail}\n`);
    for (const problem of error.extra.problems ?? []) process.stderr.write(`  ${problem.position}: ${problem.reason}\n`);
    const more = (error.extra.problemCount ?? 0) - (error.extra.problems?.length ?? 0);
    if (more > 0) process.stderr.write(`  … and ${more} more\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`price-export: unexpected error: ${(error as Error).message}\n`);
    process.exitCode = 70;
  }
}

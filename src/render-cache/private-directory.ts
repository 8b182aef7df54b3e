import { chmodSync, lstatSync, mkdirSync } from 'node:fs';

/** Why a cache root was refused; the service then runs without a cache (and says so). */
export class CacheDirectoryRefused extends Error {
  readonly code = 'CACHE_DIR_REFUSED';
}

/**
 * Makes `root` a directory only this service's user can enter (0700), or refuses it. The cache
 * holds every store's exports: a root another local user created (mode 777, say) would let
 * them read store A's file, and a symlink there would make a root-run service write where they
 * point. So: a real directory (lstat, never followed), owned by our uid; ours with looser
 * modes (an older version made it 0755) is tightened.
 */
export function ensurePrivateDirectory(root: string): void {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const found = lstatSync(root);
  if (found.isSymbolicLink()) throw new CacheDirectoryRefused(`the cache directory ${root} is a symbolic link; remove it or set CACHE_DIR`);
  if (!found.isDirectory()) throw new CacheDirectoryRefused(`the cache directory ${root} is not a directory; remove it or set CACHE_DIR`);
  const uid = process.getuid?.();
  if (uid !== undefined && found.uid !== uid) {
    throw new CacheDirectoryRefused(`the cache directory ${root} belongs to uid ${found.uid}, not to this service (uid ${uid}); remove it or set CACHE_DIR`);
  }
  if ((found.mode & 0o077) !== 0) chmodSync(root, 0o700);
}

/** Mode of every cache file: the service's user alone reads it. */
export const PRIVATE_FILE_MODE = 0o600;

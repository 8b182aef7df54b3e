/*
 * The composition root: the one module that wires the storage, the format writers and the HTTP
 * app together (src/main.ts and `price-export serve` start the service through it, the tests'
 * app builder too). The domain never imports the writers: it is handed them here.
 */
import type { FastifyInstance } from 'fastify';
import { createExportService, type ExportService } from './domain/exports.js';
import { EXPORT_WRITERS } from './formats/registry.js';
import { buildApp, type AppDependencies } from './http/app.js';
import type { Database } from './store/types.js';

/** The export use case over `db`, with every format writer and the summary workbook's. */
export function exportServiceFor(db: Database): ExportService {
  return createExportService({ db, writers: EXPORT_WRITERS });
}

/** The public app over `deps.store`, its export service composed here. */
export function buildPublicApp(deps: Omit<AppDependencies, 'exports'>): Promise<FastifyInstance> {
  return buildApp({ ...deps, exports: exportServiceFor(deps.db) });
}

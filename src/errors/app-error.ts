import { ERROR_CODES, type ErrorCode } from './codes.js';

/** A row-level problem found while validating a publication or a profile. */
export interface InputProblem {
  /** 1-based line (CSV, NDJSON) or 0-based array index (JSON), as `position` says. */
  position: string;
  reason: string;
}

/**
 * The only error type the service throws on purpose. `detail` is shown to the caller,
 * so it must never contain an API key.
 */
export class AppError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: {
      problems?: InputProblem[];
      problemCount?: number;
      retryAfterSeconds?: number;
      allow?: string;
    } = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.status = ERROR_CODES[code].status;
    this.title = ERROR_CODES[code].title;
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;

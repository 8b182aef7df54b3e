import type { Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import { ERROR_CODES, type ErrorCode } from '../errors/codes.js';
import type { AppError } from '../errors/app-error.js';

/** The RFC 9457 body every error answer carries. `type` points at the code's entry in the docs. */
export function problemBody(code: ErrorCode, detail: string, basePath: string, extra: Record<string, unknown> = {}) {
  const { status, title } = ERROR_CODES[code];
  return { type: `${basePath}/docs#error-${code}`, title, status, detail, code, ...extra };
}

/**
 * Every 401 offers both ways to present a key (CONTRACT §4, §15): the service's own ApiKey
 * scheme (header, path or `key=`) and HTTP Basic with the key as the password.
 */
export const WWW_AUTHENTICATE = 'ApiKey, Basic realm="price-export", charset="UTF-8"';

/**
 * Renders an AppError as problem+json, with the headers its status calls for. `wwwAuthenticate`
 * is the 401's challenge where it is not the public side's (the admin app's framework errors,
 * answered before its onSend hook could change it).
 */
export function sendProblem(reply: FastifyReply, error: AppError, basePath: string, wwwAuthenticate = WWW_AUTHENTICATE): FastifyReply {
  if (error.status === 401) reply.header('WWW-Authenticate', wwwAuthenticate);
  if (error.extra.allow) reply.header('Allow', error.extra.allow);
  if (error.extra.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.extra.retryAfterSeconds));
  const extra: Record<string, unknown> = {};
  if (error.extra.problems) extra.problems = error.extra.problems;
  if (error.extra.problemCount !== undefined) extra.problem_count = error.extra.problemCount;
  return reply
    .code(error.status)
    .header('Content-Type', 'application/problem+json')
    .header('Cache-Control', 'no-store')
    // A Buffer keeps the media type exactly as the contract spells it (a string gets "; charset=utf-8").
    .send(Buffer.from(JSON.stringify(problemBody(error.code, error.detail, basePath, extra))));
}

const CLIENT_ERROR_STATUS: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout'],
};

/**
 * A request the HTTP parser refused (bad request line, bad header byte, …): a problem+json
 * 400 (431, 408) with the security headers, then the connection closes. Nothing is logged.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket, basePath: string): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason] = CLIENT_ERROR_STATUS[error.code ?? ''] ?? [400, 'Bad Request'];
  const body = JSON.stringify({ ...problemBody('invalid_parameter', 'the request is malformed', basePath), status });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Referrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
  );
}

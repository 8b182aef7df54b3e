import { Type } from 'typebox';
import { ERROR_CODES, type ErrorCode } from '../../errors/codes.js';

/** RFC 9457 problem details, the body of every error answer. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'Points at the code in /docs' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String({ description: 'What was wrong, never an API key' }),
    code: Type.Union(Object.keys(ERROR_CODES).map((code) => Type.Literal(code))),
  },
  { $id: 'Problem', title: 'Problem', additionalProperties: true },
);

/** The error table spread into a route's OpenAPI responses: one entry per status, listing its codes. */
export function problemResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERROR_CODES[code].status, [...(byStatus.get(ERROR_CODES[code].status) ?? []), code]);
  const responses: Record<string, unknown> = {};
  for (const [status, list] of byStatus) {
    responses[status] = {
      description: list.map((code) => `\`${code}\`: ${ERROR_CODES[code].title}`).join('; '),
      content: { 'application/problem+json': { schema: Type.Ref('Problem') } },
    };
  }
  return responses;
}

import pg from 'pg';

/** A text from a profile or a format as an SQL literal (pg's own quoting), typed text. */
export const literal = (value: string): string => `${pg.escapeLiteral(value)}::text`;

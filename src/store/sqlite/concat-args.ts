import { FixedTextArgs } from '../fixed-text-args.js';
import { sqlConcat } from '../sql-concat.js';

/** A record's concat(), its fixed text gathered into bound parameters (fixed-text-args.ts), for the XML, YML and sheet-row compilers. */
export class ConcatArgs extends FixedTextArgs {
  expression(): string {
    return sqlConcat(this.list());
  }
}

/** The one JSON line `plc-ticket` prints (tools/plc-ticket.c): its verdict, as the tests read it. */
export interface PlcTicketOutput {
  verdict: string;
  reason: string | null;
  source: string | null;
  code_hint: string | null;
  issued_at: number | null;
  valid_until: number | null;
  problem: string | null;
  path: string;
  /** With `--key`: the key id the signed ticket verified with, else null. */
  signer?: string | null;
}

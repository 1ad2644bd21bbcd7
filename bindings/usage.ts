// Compiled with `tsc --strict` by bindings/check.sh: the generated types are usable as a client
// author would use them (a typed call, a typed result, the error shape).
import type { ReadInput, ReadResult, ToolFailure, RpcError, PruningMetadata } from "./out/contract";

const args: ReadInput = { path: "src/lib.rs", context_focus_question: "where is alpha defined?" };

function describe(result: ReadResult | ToolFailure): string {
  if ("error" in result && result.error !== undefined) {
    return `${result.error.code}: ${result.error.message}`;
  }
  const ok = result as ReadResult;
  const pruning: PruningMetadata | undefined = ok.pruning;
  return `${ok.total_lines} lines${pruning?.applied ? " (pruned)" : ""}`;
}

function rpcMessage(e: RpcError): string {
  return `${e.code} ${e.message}`;
}

export { args, describe, rpcMessage };

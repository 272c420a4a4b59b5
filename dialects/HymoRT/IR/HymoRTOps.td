#ifndef HYMO_RT_OPS_TD
#define HYMO_RT_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/RegionKindInterface.td"

def HymoRT_Dialect : Dialect {
  let name = "hymo_rt";
  let summary = "The hymo plan in IR form: buffers, parameters, entry points and their calls";
  let description = [{
    What `hymo-lower-to-rt` makes of a planned hymo module and what
    `hymo-emit-plan` writes out, field for field (docs/plan-format.md):
    every buffer with its storage, dtype, shape and arena offset, the
    parameter table, and each entry point as the ordered list of kernel
    calls the runtime executes. Ops carry the plan's fields as attributes;
    there are no SSA values (buffers are referred to by id, as in the file).
  }];
  let cppNamespace = "::mlir::hymo_rt";
}

class HymoRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<HymoRT_Dialect, mnemonic, traits>;

def HymoRT_PlanOp : HymoRT_Op<"plan", [NoTerminator, SingleBlock,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "a whole plan: header fields as attributes, the rest in the body";
  let description = [{
    ```mlir
    hymo_rt.plan {arena_bytes = 5383168 : i64, config = {...}, format = "hymo-plan", version = 1 : i64} {
      hymo_rt.buffer {dtype = "f32", id = 0 : i64, name = "embed.weight", shape = [256, 64], storage = "param"}
      hymo_rt.function {name = "forward", inputs = [...], outputs = [...]} { hymo_rt.call {...} }
    }
    ```
    plan_c1: `format`, `version` and `arena_bytes` are present.
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def HymoRT_BufferOp : HymoRT_Op<"buffer"> {
  let summary = "one buffer of the plan (docs/plan-format.md, Buffers)";
  let description = [{
    ```mlir
    hymo_rt.buffer {dtype = "f32", id = 3 : i64, name = "forward:%0", offset = 0 : i64, shape = [2, 64, 64], storage = "arena"}
    ```
    buffer_c1: `id`, `name`, `dtype`, `shape` and `storage` are present.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def HymoRT_ParamOp : HymoRT_Op<"param"> {
  let summary = "a row of the parameter table";
  let description = [{
    ```mlir
    hymo_rt.param {buffer = 0 : i64, name = "embed.weight", optimizer = "adamw"}
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def HymoRT_FunctionOp : HymoRT_Op<"function", [NoTerminator, SingleBlock,
    DeclareOpInterfaceMethods<RegionKindInterface>]> {
  let summary = "an entry point: its calls in order";
  let description = [{
    ```mlir
    hymo_rt.function {name = "micro_step", inputs = [101], outputs = [5400]} {
      hymo_rt.call {op = "linear", operands = [104, 4], results = [105]}
    }
    ```
    function_c1: a `name` is present.
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def HymoRT_CallOp : HymoRT_Op<"call"> {
  let summary = "one kernel call: a hymo op name, buffer ids in and out, attributes";
  let description = [{
    ```mlir
    hymo_rt.call {attrs = {eps = 1.0e-6 : f64}, op = "rms_norm", operands = [103, 3], results = [104]}
    ```
    call_c1: `op` is a string and `operands`/`results` are arrays.
  }];
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // HYMO_RT_OPS_TD

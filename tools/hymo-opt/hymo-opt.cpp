// hymo-opt: mlir-opt for hymo. Reads IR (or builds the forward graph of a
// config with --hymo-model), runs passes, prints IR.
//
//   hymo-opt --hymo-model=models/configs/tiny.yaml            the module
//   hymo-opt --hymo-model=models/configs/tiny.yaml --hymo-param-table
//   hymo-opt --hymo-model=CFG --hymo-set=model.dim=32 ...     with overrides
#include "dialects/Hymo/IR/HymoOps.h"
#include "models/DecodeBuilder.h"
#include "models/ModelBuilder.h"
#include "passes/Passes.h"
#include "passes/PlanEmitter.h"

#include "hymo/rt/plan_format.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
llvm::cl::opt<std::string> modelPath(
    "hymo-model",
    llvm::cl::desc("Build the forward graph of this YAML config instead of "
                   "reading IR"),
    llvm::cl::value_desc("config.yaml"), llvm::cl::init(""));
llvm::cl::opt<bool> paramTable(
    "hymo-param-table",
    llvm::cl::desc("With --hymo-model: print the parameter table "
                   "(NAME SHAPE OPTIMIZER, total, active) instead of IR"),
    llvm::cl::init(false));
llvm::cl::opt<bool> decode(
    "hymo-decode",
    llvm::cl::desc("With --hymo-model: also build @decode_step, the one-token "
                   "recurrent decode step (docs/sampling.md)"),
    llvm::cl::init(false));
llvm::cl::opt<int64_t> decodeMaxLen(
    "hymo-decode-max-len",
    llvm::cl::desc("With --hymo-decode: the MLA cache length Tmax (default "
                   "training.seq_len)"),
    llvm::cl::init(0));
llvm::cl::opt<bool> decodeOnly(
    "hymo-decode-only",
    llvm::cl::desc("With --hymo-decode: keep only @decode_step (drop @forward "
                   "and @logits, whose arena a sampler does not need)"),
    llvm::cl::init(false));
llvm::cl::opt<int64_t> decodeBatch(
    "hymo-decode-batch",
    llvm::cl::desc("With --hymo-decode: sequences per decode step (default 1)"),
    llvm::cl::init(1));
llvm::cl::list<std::string> overrides(
    "hymo-set",
    llvm::cl::desc("With --hymo-model: override a config key "
                   "(section.key=value), repeatable"),
    llvm::cl::value_desc("section.key=value"));

int fail(const std::string &message) {
  llvm::errs() << "hymo-opt: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::hymo::HymoDialect, mlir::hymo_rt::HymoRTDialect>();
  registerAllPasses();
  mlir::hymo::registerHymoPasses();

  // An error on the module op would print the whole module after it ("see
  // current operation", thousands of lines for a model): off unless asked.
  std::vector<char *> args(argv, argv + argc);
  static char quietOps[] = "--mlir-print-op-on-diagnostic=false";
  if (std::none_of(args.begin(), args.end(), [](const char *a) {
        return llvm::StringRef(a).contains("mlir-print-op-on-diagnostic");
      }))
    args.insert(args.begin() + 1, quietOps);
  argc = int(args.size());
  argv = args.data();
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, "hymo-opt: the hymo optimizer driver", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();

  std::string error;
  // Options that only mean something together: refuse them apart rather
  // than ignore them.
  if (modelPath.getNumOccurrences() && modelPath.empty())
    return fail("--hymo-model= names no file");
  if (modelPath.empty() && !overrides.empty())
    return fail("--hymo-set needs --hymo-model=CONFIG.yaml (it overrides a config key)");
  if (!decode && (decodeMaxLen.getNumOccurrences() || decodeBatch.getNumOccurrences()))
    return fail(std::string(decodeMaxLen.getNumOccurrences() ? "--hymo-decode-max-len" : "--hymo-decode-batch") +
                " needs --hymo-decode");
  if (decodeBatch < 1 || decodeBatch > ::hymo::rt::kMaxDecodeBatch)
    return fail("--hymo-decode-batch must be from 1 to " + std::to_string(::hymo::rt::kMaxDecodeBatch) + ", got " +
                std::to_string(decodeBatch));
  if (decodeMaxLen < 0 || decodeMaxLen > ::hymo::rt::kMaxDecodeMaxLen)
    return fail("--hymo-decode-max-len must be from 1 to " + std::to_string(::hymo::rt::kMaxDecodeMaxLen) +
                " (0: training.seq_len), got " + std::to_string(decodeMaxLen));
  // The output is collected here and written at the end by
  // replaceOutputFile: a failed run, or -o naming the input, leaves the file.
  std::string outText;
  llvm::raw_string_ostream out(outText);
  auto writeOutput = [&] {
    return mlir::hymo::replaceOutputFile(outputFilename, outText, &error) ? 0 : fail(error);
  };

  std::unique_ptr<llvm::MemoryBuffer> input;
  if (!modelPath.empty()) {
    std::vector<::hymo::Override> sets;
    for (const std::string &s : overrides) {
      size_t eq = s.find('=');
      if (eq == std::string::npos || eq == 0)
        return fail("--hymo-set expects section.key=value, got '" + s + "'");
      sets.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    if (inputFilename != "-")
      return fail("--hymo-model builds the module from the config: drop the input file " + inputFilename);
    std::optional<::hymo::Config> cfg = ::hymo::loadConfig(modelPath, sets, error);
    if (!cfg)
      return fail(error);
    MLIRContext context(registry);
    OwningOpRef<ModuleOp> module = ::hymo::buildForwardModule(context, *cfg);
    if (decode) {
      ::hymo::DecodeOptions opts;
      opts.batch = decodeBatch;
      opts.maxLen = decodeMaxLen;
      if (!::hymo::addDecodeStep(*module, *cfg, opts, error))
        return fail(error);
      if (decodeOnly)
        for (const char *name : {"forward", "logits"})
          if (auto fn = module->lookupSymbol<func::FuncOp>(name))
            fn.erase();
    } else if (decodeOnly) {
      return fail("--hymo-decode-only needs --hymo-decode");
    }
    if (failed(verify(*module)))
      return fail("the model builder produced IR that does not verify (a bug)");
    if (paramTable) {
      // The table is of the built model: passes asked beside it would not run.
      for (int i = 1; i < argc; ++i) {
        llvm::StringRef arg = llvm::StringRef(argv[i]).ltrim('-').split('=').first;
        if (arg == "pass-pipeline" || mlir::PassInfo::lookup(arg) || mlir::PassPipelineInfo::lookup(arg))
          return fail("--hymo-param-table prints the built model's parameters and runs no passes: drop " +
                      std::string(argv[i]));
      }
      auto forward = module->lookupSymbol<func::FuncOp>("forward");
      if (!forward)
        return fail("--hymo-param-table needs @forward (drop --hymo-decode-only)");
      ::hymo::ParamTable table;
      if (!::hymo::readParamTable(forward, table, error))
        return fail(error);
      out << ::hymo::formatParamTable(table);
      return writeOutput();
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    // An error on the module op quotes its first line, which holds the whole
    // config (hymo.config, kilobytes of JSON): break the line after the
    // attribute dictionary's brace, so that the quote is "module attributes {".
    const llvm::StringRef head = "module attributes {";
    if (llvm::StringRef(text).starts_with(head))
      text.insert(head.size(), "\n  ");
    // Diagnostics point into this text, not the YAML: name it so.
    input = llvm::MemoryBuffer::getMemBufferCopy(text, "<IR built from " + modelPath + ">");
  } else {
    if (paramTable)
      return fail("--hymo-param-table needs --hymo-model=CONFIG.yaml");
    if (decode)
      return fail("--hymo-decode needs --hymo-model=CONFIG.yaml");
    input = openInputFile(inputFilename, &error);
    if (!input)
      return fail(error);
  }
  if (failed(MlirOptMain(out, std::move(input), registry, config)))
    return 1;
  return writeOutput();
}

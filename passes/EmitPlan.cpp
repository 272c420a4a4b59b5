#include "passes/PlanEmitter.h"
#include "passes/Passes.h"

#include "models/ModelBuilder.h"
#include "dialects/HymoRT/IR/HymoRTOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "hymo/rt/plan_check.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <queue>

namespace mlir::hymo {
#define GEN_PASS_DEF_HYMOEMITPLAN
#define GEN_PASS_DEF_HYMOLOWERTORT
#include "passes/Passes.h.inc"

namespace {

constexpr int64_t kAlign = 64; // docs/plan-format.md: arena offsets

struct Buffer {
  std::string name, dtype, storage;
  SmallVector<int64_t> shape;
  int64_t offset = -1;
  std::vector<double> data; // constants
  std::string init;         // params/state: the hymo.init rule
  int64_t bytes = 0;
};

FailureOr<std::string> dtypeOf(Operation *where, Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape()) {
    where->emitError() << "plan: expected a statically shaped tensor, got " << type;
    return failure();
  }
  Type e = t.getElementType();
  if (e.isF32())
    return std::string("f32");
  if (e.isF64())
    return std::string("f64");
  if (e.isBF16())
    return std::string("bf16");
  if (e.isInteger(32))
    return std::string("i32");
  where->emitError() << "plan: unsupported element type " << e;
  return failure();
}

int64_t elementBytes(StringRef dtype) {
  return dtype == "f64" ? 8 : dtype == "bf16" ? 2 : 4;
}

/// Liveness-based first-fit placement of one function's values, in
/// definition order: each value goes to the lowest offset where it fits
/// clear of the values still live when it is defined. The free space is kept
/// as gaps (offset -> length) below the top of the live blocks, and the live
/// blocks in a heap by last use, so that a placement costs about the number
/// of gaps scanned rather than a sort of every live value (hymo-opt on tiny at
/// 128 layers: 9.9 s with the sort, 6.0 s without; docs/passes/emit-plan.md).
class ArenaPlanner {
public:
  /// Places a block of `bytes` live over [start, end] (op indices).
  int64_t place(int64_t bytes, int64_t start, int64_t end) {
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    // Free the blocks whose last use is before this value's definition.
    while (!ends.empty() && ends.top().end < start) {
      release(ends.top().offset, ends.top().size);
      ends.pop();
    }
    int64_t offset = top;
    for (auto it = gaps.begin(); it != gaps.end(); ++it)
      if (it->second >= bytes) {
        offset = it->first;
        int64_t rest = it->second - bytes;
        gaps.erase(it);
        if (rest > 0)
          gaps.emplace(offset + bytes, rest);
        break;
      }
    if (offset == top)
      top += bytes;
    ends.push({end, offset, bytes});
    live += bytes;
    peak = std::max(peak, top);
    bound = std::max(bound, live);
    return offset;
  }
  int64_t peak = 0;
  /// The most bytes live at once (at a definition, where the sum can only
  /// grow): no placement of these lifetimes has a lower peak.
  int64_t bound = 0;

private:
  struct Live {
    int64_t end, offset, size;
    bool operator<(const Live &o) const { return end > o.end; } // (a min-heap)
  };
  /// Returns [offset, offset + size) to the free space, merged with the gaps
  /// beside it; free space at the top lowers the top.
  void release(int64_t offset, int64_t size) {
    live -= size;
    int64_t lo = offset, hi = offset + size;
    auto next = gaps.lower_bound(hi);
    if (next != gaps.end() && next->first == hi) {
      hi += next->second;
      next = gaps.erase(next);
    }
    if (next != gaps.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == lo) {
        lo = prev->first;
        gaps.erase(prev);
      }
    }
    if (hi == top)
      top = lo;
    else
      gaps.emplace(lo, hi - lo);
  }

  std::map<int64_t, int64_t> gaps; // free [offset, offset + length) below top
  std::priority_queue<Live> ends;  // the live blocks, soonest last use first
  int64_t top = 0, live = 0;
};

Attribute toAttr(MLIRContext *ctx, const llvm::json::Value &v);

/// A name as a JSON object key holds it: invalid UTF-8 repaired (U+FFFD), as
/// llvm::json does to every key it writes or keeps.
std::string jsonKey(llvm::StringRef name) {
  return llvm::json::isUTF8(name) ? name.str() : llvm::json::fixUTF8(name);
}

/// The keys and values of a JSON object made of `attrs` (all but one named `skip`) and
/// the keys `extra` (value null: the caller writes them), as a JSON object
/// value holds them: keys UTF-8-repaired, a key met twice its last value, an
/// extra key replacing a field's, in byte order.
SmallVector<std::pair<std::string, Attribute>> jsonFields(llvm::ArrayRef<NamedAttribute> attrs,
                                                          llvm::ArrayRef<llvm::StringRef> extra = {},
                                                          std::optional<llvm::StringRef> skip = std::nullopt) {
  std::map<std::string, Attribute> out;
  for (NamedAttribute f : attrs)
    if (f.getName().getValue() != skip)
      out[jsonKey(f.getName().getValue())] = f.getValue();
  for (llvm::StringRef k : extra)
    out[k.str()] = Attribute();
  return SmallVector<std::pair<std::string, Attribute>>(out.begin(), out.end());
}

/// Whether a JSON value holds a non-finite number anywhere.
bool holdsNonFinite(const llvm::json::Value &v) {
  if (auto d = v.getAsNumber(); d && v.kind() == llvm::json::Value::Number && !std::isfinite(*d))
    return true;
  if (auto *a = v.getAsArray())
    return llvm::any_of(*a, holdsNonFinite);
  if (auto *o = v.getAsObject())
    return llvm::any_of(*o, [](const auto &kv) { return holdsNonFinite(kv.second); });
  return false;
}

/// Takes the calls the plan writer makes on an llvm::json::OStream and builds
/// the attribute that the written text would parse back to (toAttr): objects
/// as dictionaries, arrays as array attributes, each scalar as toAttr makes
/// it (an integral number an i64, as the text "2" parses to an integer).
class AttrWriter {
public:
  explicit AttrWriter(MLIRContext *ctx) : ctx(ctx) {}

  void value(const llvm::json::Value &v) { put(toAttr(ctx, v)); }
  void attribute(llvm::StringRef key, const llvm::json::Value &v) {
    setKey(key);
    value(v);
  }
  void object(llvm::function_ref<void()> body) {
    frames.push_back({/*object=*/true, {}, {}, {}});
    body();
    Frame f = frames.pop_back_val();
    // (Keys as the parsed text holds them: repaired, a repeated key its last value, sorted.)
    SmallVector<NamedAttribute> fields;
    for (auto &[key, value] : jsonFields(f.fields))
      fields.emplace_back(StringAttr::get(ctx, key), value);
    put(DictionaryAttr::getWithSorted(ctx, fields));
  }
  void array(llvm::function_ref<void()> body) {
    frames.push_back({/*object=*/false, {}, {}, {}});
    body();
    Frame f = frames.pop_back_val();
    put(ArrayAttr::get(ctx, f.items));
  }
  void attributeObject(llvm::StringRef key, llvm::function_ref<void()> body) {
    setKey(key);
    object(body);
  }
  void attributeArray(llvm::StringRef key, llvm::function_ref<void()> body) {
    setKey(key);
    array(body);
  }
  /// The object written (the writers write one object at the top).
  DictionaryAttr take() { return cast<DictionaryAttr>(result); }

private:
  struct Frame {
    bool object;
    SmallVector<NamedAttribute> fields;
    SmallVector<Attribute> items;
    std::string key;
  };
  void setKey(llvm::StringRef key) { frames.back().key = key.str(); }
  void put(Attribute a) {
    if (frames.empty())
      result = a;
    else if (frames.back().object)
      frames.back().fields.emplace_back(StringAttr::get(ctx, frames.back().key), a);
    else
      frames.back().items.push_back(a);
  }

  MLIRContext *ctx;
  SmallVector<Frame> frames;
  Attribute result;
};

class PlanWriter {
public:
  explicit PlanWriter(ModuleOp module) : module(module) {}

  LogicalResult write(llvm::raw_ostream &os, PlanStats *stats) {
    if (failed(plan()))
      return failure();
    llvm::json::OStream j(os, /*IndentSize=*/1);
    j.object([&] {
      writeHead(j);
      j.attributeArray("buffers", [&] {
        for (size_t i = 0; i < buffers.size(); ++i)
          writeBuffer(j, i, buffers[i]);
      });
      j.attributeArray("params", [&] {
        for (auto &[name, id] : params)
          writeParam(j, name, id);
      });
      j.attributeObject("functions", [&] {
        for (auto &f : functions)
          j.attributeObject(f.name, [&] {
            writeInts(j, "inputs", f.inputs);
            writeInts(j, "outputs", f.outputs);
            j.attributeArray("calls", [&] {
              for (const Call &c : f.calls)
                writeCall(j, c);
            });
          });
      });
    });
    os << "\n";
    fillStats(stats);
    return failure(failed_);
  }

  /// The same plan as hymo_rt ops appended to the module (the hymo functions
  /// stay; lowerToRt erases them): each op's fields are the attributes its
  /// JSON text would parse back to (toAttr), built from the writer's own
  /// records without the text (which `hymo-run compile` wrote and parsed
  /// back before session 70: hymo_750m 2.03 s / 420 MB).
  LogicalResult lower(PlanStats *stats) {
    if (failed(plan()))
      return failure();
    MLIRContext *ctx = module.getContext();
    AttrWriter head(ctx);
    head.object([&] { writeHead(head); });
    if (failed_)
      return failure();
    fillStats(stats);
    ctx->getOrLoadDialect<hymo_rt::HymoRTDialect>();
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    Location loc = module.getLoc();
    auto planOp = hymo_rt::PlanOp::create(b, loc);
    planOp->setAttrs(head.take());
    b.createBlock(&planOp.getBody());
    auto withFields = [&](Operation *op, auto write) {
      AttrWriter w(ctx);
      write(w);
      op->setAttrs(w.take());
    };
    for (size_t i = 0; i < buffers.size(); ++i)
      withFields(hymo_rt::BufferOp::create(b, loc), [&](AttrWriter &w) { writeBuffer(w, i, buffers[i]); });
    for (auto &[name, id] : params)
      withFields(hymo_rt::ParamOp::create(b, loc), [&](AttrWriter &w) { writeParam(w, name, id); });
    for (Function &f : functions) {
      OpBuilder::InsertionGuard guard(b);
      auto fnOp = hymo_rt::FunctionOp::create(b, loc);
      withFields(fnOp, [&](AttrWriter &w) {
        w.object([&] {
          w.attribute("name", f.name);
          writeInts(w, "inputs", f.inputs);
          writeInts(w, "outputs", f.outputs);
        });
      });
      b.createBlock(&fnOp.getBody());
      for (const Call &c : f.calls)
        withFields(hymo_rt::CallOp::create(b, loc), [&](AttrWriter &w) { writeCall(w, c); });
      std::vector<Call>().swap(f.calls);  // (lowered: the records go as the ops come)
    }
    return success();
  }

private:
  /// A call as the plan writes it (a JSON object of each call held until the
  /// end took most of emit-plan's memory: tiny at 128 layers, 1.09 GB).
  struct Call {
    std::string op;
    llvm::SmallVector<int64_t, 3> operands, results;
    std::vector<std::pair<std::string, llvm::json::Value>> attrs;
  };
  /// Plans every function (once).
  LogicalResult plan() {
    if (planned)
      return success();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(addFunction(func)))
        return failure();
    planned = true;
    return success();
  }

  /// The writers below take either a JSON text stream (llvm::json::OStream)
  /// or an AttrWriter, which has the same calls.
  template <typename J>
  void writeHead(J &j) {
    j.attribute("format", "hymo-plan");
    j.attribute("version", 1);
    j.attribute("producer", "hymo-opt --hymo-emit-plan");
    if (failed(writeConfig(j)))
      failed_ = true;
    j.attribute("arena_bytes", arenaBytes);
  }

  template <typename J>
  void writeParam(J &j, const std::string &name, int64_t id) {
    j.object([&] {
      j.attribute("name", name);
      j.attribute("buffer", id);
      j.attribute("optimizer", optimizers[name]);
    });
  }

  void fillStats(PlanStats *stats) {
    if (!stats)
      return;
    stats->arenaBytes = arenaBytes;
    for (auto &f : functions) {
      stats->peakBytes[f.name] = f.peak, stats->liveBytes[f.name] = f.bound;
      stats->calls += static_cast<int64_t>(f.calls.size());
    }
    stats->unplannedBytes = unplanned;
    stats->reshapeViews = aliases;
    for (const Buffer &b : buffers)
      if (b.storage == "param" || b.storage == "state" || b.storage == "input")
        stats->persistentBytes += b.bytes;
  }

  /// Writes `key`: a list of integers (buffer ids, dims).
  template <typename J, typename Ints>
  static void writeInts(J &j, llvm::StringRef key, const Ints &ints) {
    j.attributeArray(key, [&] {
      for (int64_t v : ints)
        j.value(v);
    });
  }
  /// Writes a call with its keys, and its attributes', in byte order, as a
  /// JSON object value writes them.
  template <typename J>
  static void writeCall(J &j, const Call &c) {
    j.object([&] {
      if (!c.attrs.empty())
        j.attributeObject("attrs", [&] {
          std::vector<const std::pair<std::string, llvm::json::Value> *> sorted;
          for (const auto &a : c.attrs)
            sorted.push_back(&a);
          llvm::sort(sorted, [](auto *a, auto *b) { return a->first < b->first; });
          for (const auto *a : sorted)
            j.attribute(a->first, a->second);
        });
      j.attribute("op", c.op);
      writeInts(j, "operands", c.operands);
      writeInts(j, "results", c.results);
    });
  }

  struct Function {
    std::string name;
    std::vector<int64_t> inputs, outputs;
    std::vector<Call> calls;
    int64_t peak = 0, bound = 0;
  };

  template <typename J>
  LogicalResult writeConfig(J &j) {
    auto attr = module->getAttrOfType<StringAttr>(::hymo::kConfigAttr);
    if (!attr) {
      j.attributeObject("config", [] {});
      return success();
    }
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(attr.getValue());
    if (!v) {
      llvm::consumeError(v.takeError());
      module.emitError() << "plan: the module's " << ::hymo::kConfigAttr
                         << " is not valid JSON";
      j.attributeObject("config", [] {});
      return failure();
    }
    if (holdsNonFinite(*v)) {
      module.emitError() << "plan: the module's " << ::hymo::kConfigAttr
                         << " holds a non-finite number (JSON has no NaN or Inf)";
      j.attributeObject("config", [] {});
      return failure();
    }
    j.attribute("config", std::move(*v));
    return success();
  }

  template <typename J>
  void writeBuffer(J &j, size_t id, const Buffer &b) {
    j.object([&] {
      j.attribute("id", static_cast<int64_t>(id));
      j.attribute("name", b.name);
      j.attribute("dtype", b.dtype);
      writeInts(j, "shape", b.shape);
      j.attribute("storage", b.storage);
      if (b.storage == "arena")
        j.attribute("offset", b.offset);
      if (b.storage == "constant")
        j.attributeArray("data", [&] {
          for (double v : b.data)
            j.value(v);
        });
      if (!b.init.empty())
        writeInit(j, b, static_cast<int64_t>(id));
    });
  }

  /// Turns a hymo.init rule into the plan's init object; the seed mixes the
  /// config's training.seed with the buffer id so every tensor differs.
  template <typename J>
  void writeInit(J &j, const Buffer &b, int64_t id) {
    StringRef rule = b.init;
    auto [kind, arg] = rule.split(':');
    double value = 0;
    if (!arg.empty())
      arg.getAsDouble(value);
    int64_t seed = configSeed() * 1000003 + id;
    j.attributeObject("init", [&] {
      if (kind == "uniform") {
        j.attributeArray("uniform", [&] {
          j.value(-value);
          j.value(value);
        });
        j.attribute("seed", seed);
      } else if (kind == "normal") {
        j.attributeArray("normal", [&] {
          j.value(0.0);
          j.value(value);
        });
        j.attribute("seed", seed);
      } else if (kind == "fill") {
        j.attribute("fill", value);
      } else if (kind == "a_log") {
        j.attributeArray("data", [&] {
          int64_t rows = b.shape[0], cols = b.shape.size() > 1 ? b.shape[1] : 1;
          for (int64_t h = 0; h < rows; ++h)
            for (int64_t s = 0; s < cols; ++s)
              j.value(std::log(static_cast<double>(h + 1)));
        });
      } else {
        j.attribute("zeros", true);
      }
    });
  }

  int64_t configSeed() {
    auto attr = module->getAttrOfType<StringAttr>(::hymo::kConfigAttr);
    if (!attr)
      return 0;
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(attr.getValue());
    if (!v) {
      llvm::consumeError(v.takeError());
      return 0;
    }
    if (auto *o = v->getAsObject())
      if (auto *t = o->getObject("training"))
        if (auto seed = t->getInteger("seed"))
          return *seed;
    return 0;
  }

  FailureOr<int64_t> newBuffer(Operation *where, Type type, std::string name,
                               std::string storage) {
    FailureOr<std::string> dtype = dtypeOf(where, type);
    if (failed(dtype))
      return failure();
    Buffer b;
    b.name = std::move(name);
    b.dtype = *dtype;
    b.storage = std::move(storage);
    auto t = cast<RankedTensorType>(type);
    b.shape.assign(t.getShape().begin(), t.getShape().end());
    b.bytes = t.getNumElements() * elementBytes(b.dtype);
    buffers.push_back(std::move(b));
    return static_cast<int64_t>(buffers.size() - 1);
  }

  /// The persistent buffer bound to a named argument, shared by every
  /// function that takes it.
  FailureOr<int64_t> argumentBuffer(func::FuncOp func, unsigned i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, ::hymo::kNameAttr);
    auto role = func.getArgAttrOfType<StringAttr>(i, ::hymo::kRoleAttr);
    if (!name || !role) {
      func.emitError() << "plan: argument " << i << " of @" << func.getSymName()
                       << " needs hymo.name and hymo.role";
      return failure();
    }
    if (!llvm::is_contained({"param", "buffer", "state", "input"}, role.getValue())) {
      func.emitError() << "plan: argument " << name << " of @" << func.getSymName() << " has hymo.role \""
                       << role.getValue() << "\"; expected param, buffer, state or input";
      return failure();
    }
    std::string storage = role.getValue() == "param"    ? "param"
                          : role.getValue() == "buffer" ? "state"
                          : role.getValue() == "state"  ? "state"
                                                        : "input";
    auto it = named.find(name.getValue());
    if (it != named.end()) {
      const Buffer &b = buffers[it->second];
      auto t = cast<RankedTensorType>(func.getArgument(i).getType());
      if (b.storage != storage || ArrayRef<int64_t>(b.shape) != t.getShape()) {
        func.emitError() << "plan: argument " << name << " of @" << func.getSymName()
                         << " disagrees with an earlier function's (" << b.storage
                         << " of another shape or role)";
        return failure();
      }
      return it->second;
    }
    FailureOr<int64_t> id = newBuffer(func, func.getArgument(i).getType(),
                                      name.str(), storage);
    if (failed(id))
      return failure();
    named[name.getValue()] = *id;
    if (auto init = func.getArgAttrOfType<StringAttr>(i, ::hymo::kInitAttr)) {
      // The rules writeInit knows: zeros, a_log, fill:V, normal:STD,
      // uniform:BOUND (V finite, STD and BOUND >= 0).
      auto [kind, arg] = init.getValue().split(':');
      double v = 0;
      bool number = !arg.empty() && !arg.getAsDouble(v) && std::isfinite(v);
      bool ok = ((kind == "zeros" || kind == "a_log") && !init.getValue().contains(':')) ||
                (kind == "fill" && number) || ((kind == "normal" || kind == "uniform") && number && v >= 0);
      if (!ok) {
        func.emitError() << "plan: argument " << name << " of @" << func.getSymName() << " has hymo.init \""
                         << init.getValue()
                         << "\"; expected zeros, a_log, fill:VALUE, normal:STD or uniform:BOUND (STD, BOUND >= 0)";
        return failure();
      }
      buffers[*id].init = init.str();
    }
    else if (storage != "input")
      buffers[*id].init = "zeros";
    if (storage != "input") {
      auto opt = func.getArgAttrOfType<StringAttr>(i, ::hymo::kOptimizerAttr);
      if (role.getValue() == "param" || role.getValue() == "buffer") {
        params.emplace_back(name.str(), *id);
        optimizers[name.str()] = opt ? opt.str() : "none";
      }
    }
    return *id;
  }

  LogicalResult addFunction(func::FuncOp func) {
    if (!func.getBody().hasOneBlock())
      return func.emitError() << "plan: expected a single-block function";
    Function f;
    f.name = func.getSymName().str();
    llvm::DenseMap<Value, int64_t> bufferOf;
    Block &body = func.getBody().front();
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      FailureOr<int64_t> id = argumentBuffer(func, i);
      if (failed(id))
        return failure();
      bufferOf[func.getArgument(i)] = *id;
      if (buffers[*id].storage == "input")
        f.inputs.push_back(*id);
    }

    // Liveness: the index of each value's last use; returned values live on.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    llvm::DenseMap<Value, int64_t> lastUse;
    int64_t index = 0, end = 0;
    for (Operation &op : body) {
      for (Value v : op.getOperands())
        lastUse[v] = index;
      ++index;
    }
    end = index;
    for (Value v : ret.getOperands())
      lastUse[v] = end;
    // A reshape of an arena value is a view of the same bytes (below): the
    // source lives as long as the view.
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (auto r = dyn_cast<ReshapeOp>(op))
        if (r.getX().getDefiningOp() && lastUse.count(r.getOut()))
          lastUse[r.getX()] = std::max(lastUse[r.getX()], lastUse[r.getOut()]);

    // Result names for output buffers.
    llvm::DenseMap<Value, std::string> resultName;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto n = func.getResultAttrOfType<StringAttr>(i, ::hymo::kNameAttr);
      resultName.try_emplace(ret.getOperand(i),
                             f.name + ":" + (n ? n.str() : "result" + std::to_string(i)));
    }

    // Donation: a result marked hymo.update = "<buffer>" is written into
    // that argument's buffer, in place when its producer is the old value's
    // last reader (or reads it elementwise), else by a copy at the end.
    llvm::DenseMap<Value, int64_t> donateTo;
    llvm::DenseMap<Operation *, int64_t> opIndex;
    index = 0;
    for (Operation &op : body)
      opIndex[&op] = index++;
    SmallVector<std::pair<int64_t, int64_t>> copies; // (from value's buffer, to)
    SmallVector<Value> copyFrom;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto target = func.getResultAttrOfType<StringAttr>(i, "hymo.update");
      if (!target)
        continue;
      auto it = named.find(target.getValue());
      if (it == named.end())
        return func.emitError() << "plan: result " << i << " updates " << target
                                << ", which is not an argument";
      Value v = ret.getOperand(i);
      Operation *def = v.getDefiningOp();
      Value old;
      for (unsigned a = 0; a < func.getNumArguments(); ++a)
        if (bufferOf.lookup(func.getArgument(a)) == it->second)
          old = func.getArgument(a);
      bool inPlace = def && !isa<ConstantOp>(def) && !donateTo.count(v) && old &&
                     (def->getNumResults() == 1 || isa<FusedElementwiseOp>(def));
      if (inPlace) {
        int64_t at = opIndex[def];
        int64_t oldLast = -1;
        for (Operation *user : old.getUsers())
          if (user != ret.getOperation())
            oldLast = std::max(oldLast, opIndex[user]);
        bool readsOld = llvm::is_contained(def->getOperands(), old);
        // Elementwise kernels (fused ones too) read each element before
        // writing it, so they may overwrite an operand.
        bool elementwise = def->hasTrait<OpTrait::Elementwise>() || isa<FusedElementwiseOp>(def);
        inPlace = oldLast < at || (oldLast == at && readsOld && elementwise);
        for (Operation *user : old.getUsers())
          if (user == ret.getOperation())
            inPlace = false; // the old value is also returned
      }
      if (inPlace)
        donateTo[v] = it->second;
      else
        copyFrom.push_back(v), copies.push_back({-1, it->second});
    }

    ArenaPlanner planner;
    int64_t counter = 0;
    index = 0;
    for (Operation &op : body.without_terminator()) {
      if (auto c = dyn_cast<ConstantOp>(op)) {
        auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
        if (!dense)
          return op.emitError() << "plan: expected a dense constant";
        auto name = resultName.count(c.getOut()) ? resultName[c.getOut()]
                                                 : f.name + ":const" + std::to_string(counter++);
        FailureOr<int64_t> id = newBuffer(&op, c.getType(), name, "constant");
        if (failed(id))
          return failure();
        Buffer &b = buffers[*id];
        if (dense.isSplat()) {
          b.data.push_back(dense.getElementType().isInteger(32)
                               ? double(dense.getSplatValue<APInt>().getSExtValue())
                               : dense.getSplatValue<APFloat>().convertToDouble());
        } else if (dense.getElementType().isInteger(32)) {
          for (APInt v : dense.getValues<APInt>())
            b.data.push_back(double(v.getSExtValue()));
        } else {
          for (APFloat v : dense.getValues<APFloat>())
            b.data.push_back(v.convertToDouble());
        }
        // (The plan is written as it is built, not parsed back: a value JSON
        // cannot hold is refused here.)
        if (!llvm::all_of(b.data, [](double v) { return std::isfinite(v); }))
          return op.emitError() << "plan: a constant holds a non-finite number (JSON has no NaN or Inf)";
        bufferOf[c.getOut()] = *id;
        ++index;
        continue;
      }
      if (auto r = dyn_cast<ReshapeOp>(op)) {
        auto src = bufferOf.find(r.getX());
        if (src != bufferOf.end() && buffers[src->second].storage == "arena" &&
            !resultName.count(r.getOut()) && !donateTo.count(r.getOut())) {
          FailureOr<int64_t> id = newBuffer(&op, r.getType(), f.name + ":%" + std::to_string(counter++), "arena");
          if (failed(id))
            return failure();
          buffers[*id].offset = buffers[src->second].offset;
          bufferOf[r.getOut()] = *id;
          ++aliases;
          ++index;
          continue;
        }
      }
      if (op.getDialect() != module->getContext()->getLoadedDialect<HymoDialect>())
        return op.emitError() << "plan: only hymo ops can be planned, got " << op.getName();
      Call call;
      call.op = op.getName().stripDialect().str();
      for (Value v : op.getOperands())
        call.operands.push_back(bufferOf.lookup(v));
      for (Value r : op.getResults()) {
        if (auto d = donateTo.find(r); d != donateTo.end()) {
          bufferOf[r] = d->second;
          call.results.push_back(d->second);
          continue;
        }
        auto it = resultName.find(r);
        std::string name = it != resultName.end() ? it->second
                                                  : f.name + ":%" + std::to_string(counter++);
        FailureOr<int64_t> id = newBuffer(&op, r.getType(), name, "arena");
        if (failed(id))
          return failure();
        int64_t last = lastUse.count(r) ? lastUse[r] : index;
        buffers[*id].offset = planner.place(buffers[*id].bytes, index, last);
        unplanned += buffers[*id].bytes;
        bufferOf[r] = *id;
        call.results.push_back(*id);
      }
      auto &attrs = call.attrs;
      for (NamedAttribute a : op.getAttrs()) {
        if (a.getName().getValue().starts_with("hymo."))
          continue; // discardable annotations
        std::string key = a.getName().getValue().str();
        if (auto b = dyn_cast<BoolAttr>(a.getValue()))
          attrs.emplace_back(key, b.getValue());
        else if (auto i = dyn_cast<IntegerAttr>(a.getValue()))
          attrs.emplace_back(key, i.getInt());
        else if (auto str = dyn_cast<StringAttr>(a.getValue()))
          attrs.emplace_back(key, str.str());
        else if (auto fl = dyn_cast<FloatAttr>(a.getValue())) {
          if (!std::isfinite(fl.getValueAsDouble()))
            return op.emitError() << "plan: attribute " << a.getName()
                                  << " holds a non-finite number (JSON has no NaN or Inf)";
          attrs.emplace_back(key, fl.getValueAsDouble());
        } else if (auto arr = dyn_cast<DenseI64ArrayAttr>(a.getValue())) {
          llvm::json::Array list;
          for (int64_t v : arr.asArrayRef())
            list.push_back(v);
          attrs.emplace_back(key, std::move(list));
        } else
          return op.emitError() << "plan: cannot express attribute " << a.getName();
      }
      f.calls.push_back(std::move(call));
      ++index;
    }
    // Outputs first: a returned argument must be read before its buffer is
    // overwritten by a donated update.
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      if (func.getResultAttr(i, "hymo.update"))
        continue;
      Value v = ret.getOperand(i);
      auto it = bufferOf.find(v);
      if (it == bufferOf.end())
        return ret.emitError() << "plan: a returned value has no buffer";
      auto n = func.getResultAttrOfType<StringAttr>(i, ::hymo::kNameAttr);
      std::string want = f.name + ":" + (n ? n.str() : "result" + std::to_string(i));
      int64_t id = it->second;
      if (buffers[id].name != want) {
        // Returned twice, or an argument/constant: give the output its own
        // named buffer.
        FailureOr<int64_t> copy = newBuffer(func, v.getType(), want, "arena");
        if (failed(copy))
          return failure();
        buffers[*copy].offset = planner.place(buffers[*copy].bytes, index, index);
        Call call;
        call.op = "reshape";
        call.operands = {id};
        call.results = {*copy};
        f.calls.push_back(std::move(call));
        id = *copy;
      }
      f.outputs.push_back(id);
    }
    for (size_t k = 0; k < copies.size(); ++k) {
      int64_t from = bufferOf.lookup(copyFrom[k]);
      if (from == copies[k].second)
        continue;
      const Buffer &src = buffers[from];
      if (src.storage == "constant" && src.data.size() == 1) {
        // A splat (a zeroed accumulator): fill the buffer, no copy.
        Call call;
        call.op = "constant";
        call.results = {copies[k].second};
        call.attrs.emplace_back("value", llvm::json::Array{src.data[0]});
        f.calls.push_back(std::move(call));
        continue;
      }
      Call call;
      call.op = "reshape"; // same shape: a copy into the donated buffer
      call.operands = {from};
      call.results = {copies[k].second};
      f.calls.push_back(std::move(call));
    }
    f.peak = planner.peak;
    f.bound = planner.bound;
    arenaBytes = std::max(arenaBytes, planner.peak);
    functions.push_back(std::move(f));
    return success();
  }

  ModuleOp module;
  std::vector<Buffer> buffers;
  llvm::StringMap<int64_t> named;
  std::vector<std::pair<std::string, int64_t>> params;
  std::map<std::string, std::string> optimizers;
  std::vector<Function> functions;
  int64_t arenaBytes = 0, unplanned = 0, aliases = 0;
  bool failed_ = false, planned = false;
};

struct EmitPlanPass : impl::HymoEmitPlanBase<EmitPlanPass> {
  using HymoEmitPlanBase::HymoEmitPlanBase;

  void runOnOperation() override {
    if (output.empty()) {
      getOperation().emitError() << "hymo-emit-plan needs output=PATH";
      return signalPassFailure();
    }
    // The plan is written in full before the file is touched, and a failed
    // run leaves the plan already there as it was (replaceOutputFile).
    PlanStats stats;
    std::string text;
    llvm::raw_string_ostream planText(text);
    if (failed(writePlan(getOperation(), planText, &stats)))
      return signalPassFailure();
    // The runtime's own check: a plan it would refuse (hand-written IR with
    // a bad role, init rule or reference) is an error here, not a file.
    std::string refused;
    if (!::hymo::rt::check_plan_text(text, &refused)) {
      getOperation().emitError() << "the runtime would refuse this plan: " << refused;
      return signalPassFailure();
    }
    std::string error;
    if (!replaceOutputFile(output, text, &error)) {
      getOperation().emitError() << "cannot write the plan: " << error;
      return signalPassFailure();
    }
    if (report) {
      llvm::errs() << "hymo plan: " << stats.calls << " calls, arena "
                   << stats.arenaBytes << " bytes planned (peak), "
                   << stats.unplannedBytes << " bytes without reuse, persistent "
                   << stats.persistentBytes << " bytes, " << stats.reshapeViews
                   << " reshapes as views\n";
      for (auto &[name, peak] : stats.peakBytes) {
        llvm::errs() << "hymo plan:   @" << name << " peak " << peak << " bytes";
        if (auto it = stats.liveBytes.find(name); it != stats.liveBytes.end())
          llvm::errs() << " (at most " << it->second << " bytes live at once)";
        llvm::errs() << "\n";
      }
    }
  }
};

} // namespace

namespace {

// JSON <-> attributes, field for field: the hymo_rt ops hold the plan's
// fields as attributes (objects as dictionaries, numbers as i64 or f64).
Attribute toAttr(MLIRContext *ctx, const llvm::json::Value &v) {
  Builder b(ctx);
  if (v.getAsNull())
    return b.getUnitAttr();
  if (auto x = v.getAsBoolean())
    return b.getBoolAttr(*x);
  if (auto x = v.getAsInteger())
    return b.getI64IntegerAttr(*x);
  if (auto x = v.getAsNumber())
    return b.getF64FloatAttr(*x);
  if (auto x = v.getAsString())
    return b.getStringAttr(*x);
  if (auto *a = v.getAsArray()) {
    SmallVector<Attribute> items;
    for (const llvm::json::Value &e : *a)
      items.push_back(toAttr(ctx, e));
    return b.getArrayAttr(items);
  }
  SmallVector<NamedAttribute> fields;
  for (const auto &[k, e] : *v.getAsObject())
    fields.push_back(b.getNamedAttr(k.str(), toAttr(ctx, e)));
  return b.getDictionaryAttr(fields);
}

/// The JSON of a hymo_rt field. A kind of attribute the plan format has no
/// JSON for (a dense array, a type, a non-finite float) sets *bad to what it
/// is and yields null, so that the caller can refuse the plan.
llvm::json::Value toJson(Attribute a, std::string *bad) {
  if (auto x = dyn_cast<FloatAttr>(a); x && !std::isfinite(x.getValueAsDouble())) {
    *bad = "a non-finite number (JSON has no NaN or Inf)";
    return nullptr;
  }
  if (isa<UnitAttr>(a))
    return nullptr;
  if (auto x = dyn_cast<BoolAttr>(a))
    return x.getValue();
  if (auto x = dyn_cast<IntegerAttr>(a))
    return x.getInt();
  if (auto x = dyn_cast<FloatAttr>(a))
    return x.getValueAsDouble();
  if (auto x = dyn_cast<StringAttr>(a))
    return x.str();
  if (auto x = dyn_cast<ArrayAttr>(a)) {
    llvm::json::Array out;
    for (Attribute e : x)
      out.push_back(toJson(e, bad));
    return out;
  }
  auto dict = dyn_cast<DictionaryAttr>(a);
  if (!dict) {
    std::string text;
    llvm::raw_string_ostream os(text);
    a.print(os);
    *bad = "an attribute the plan format has no JSON for: " + text;
    return nullptr;
  }
  llvm::json::Object out;
  for (NamedAttribute f : dict)
    out[f.getName().getValue()] = toJson(f.getValue(), bad);
  return out;
}

/// Writes a hymo_rt field's JSON, one the checks (checkFields) passed.
void writeJson(llvm::json::OStream &j, Attribute a) {
  if (auto x = dyn_cast<ArrayAttr>(a)) {
    j.array([&] {
      for (Attribute e : x)
        writeJson(j, e);
    });
    return;
  }
  if (auto x = dyn_cast<DictionaryAttr>(a)) {
    j.object([&] {
      for (auto &[key, value] : jsonFields(x.getValue()))
        j.attributeBegin(key), writeJson(j, value), j.attributeEnd();
    });
    return;
  }
  std::string bad;
  j.value(toJson(a, &bad));
}

/// Checks an op's fields as the plan writes them: the first field without a
/// JSON form is reported at its op and sets *failed. (Every field, the ones a
/// written key replaces too, in the order the ops come: as when the plan was
/// built as one JSON tree.)
void checkFields(Operation *op, bool *failed) {
  for (NamedAttribute f : op->getAttrs()) {
    std::string bad;
    (void)toJson(f.getValue(), &bad);
    if (!bad.empty() && !*failed) {
      op->emitError() << "plan: field '" << f.getName().getValue() << "' holds " << bad;
      *failed = true;
    }
  }
}

/// Writes the fields of `op` (all but `skip`) and `extra`'s as one JSON object,
/// as a JSON object value holding them writes it: keys UTF-8-repaired, a key
/// met twice its last value, an extra replacing a field of its key, keys in
/// byte order.
void writeFields(llvm::json::OStream &j, Operation *op,
                 llvm::ArrayRef<std::pair<llvm::StringRef, llvm::function_ref<void()>>> extra,
                 std::optional<llvm::StringRef> skip = std::nullopt) {
  SmallVector<llvm::StringRef> keys;
  for (auto &e : extra)
    keys.push_back(e.first);
  auto fields = jsonFields(op->getAttrs(), keys, skip);
  j.object([&] {
    for (auto &[key, value] : fields) {
      j.attributeBegin(key);
      if (value)
        writeJson(j, value);
      else
        llvm::find_if(extra, [&](auto &e) { return e.first == key; })->second();
      j.attributeEnd();
    }
  });
}

/// Writes the plan a hymo_rt.plan op holds, walking its ops (no JSON tree of
/// the whole plan: before session 70 one was built and then written). The
/// checks come first, so that a refused plan writes nothing.
LogicalResult writeRtPlan(hymo_rt::PlanOp plan, llvm::raw_ostream &os) {
  bool bad = false;
  checkFields(plan, &bad);
  SmallVector<Operation *> buffers, params;
  std::map<std::string, hymo_rt::FunctionOp> functions; // by JSON key: the object's order
  for (Operation &op : plan.getBody().front()) {
    if (isa<hymo_rt::BufferOp>(op)) {
      buffers.push_back(&op);
      checkFields(&op, &bad);
    } else if (isa<hymo_rt::ParamOp>(op)) {
      params.push_back(&op);
      checkFields(&op, &bad);
    } else if (auto fn = dyn_cast<hymo_rt::FunctionOp>(op)) {
      auto nameAttr = fn->getAttrOfType<StringAttr>("name");
      if (!nameAttr)
        return fn->emitError() << "plan: hymo_rt.function needs a string 'name'";
      // (A name that needed the UTF-8 repair replaces a function of its
      // repaired name, as a JSON object's key does.)
      llvm::StringRef name = nameAttr.getValue();
      if (llvm::json::isUTF8(name) && functions.count(name.str()))
        return fn->emitError() << "plan: a second hymo_rt.function named '" << name << "'";
      functions[jsonKey(name)] = fn;
      checkFields(fn, &bad);
      for (Operation &c : fn.getBody().front())
        checkFields(&c, &bad);
    }
  }
  if (bad)
    return failure();
  llvm::json::OStream j(os, /*IndentSize=*/1);
  auto list = [&j](llvm::ArrayRef<Operation *> ops) {
    j.array([&] {
      for (Operation *op : ops)
        writeFields(j, op, {});
    });
  };
  auto writeBuffers = [&] { list(buffers); };
  auto writeParams = [&] { list(params); };
  auto writeFunctions = [&] {
    j.object([&] {
      for (auto &[key, fn] : functions) {
        j.attributeBegin(key);
        auto calls = [&] {
          j.array([&] {
            for (Operation &c : fn.getBody().front())
              writeFields(j, &c, {});
          });
        };
        writeFields(j, fn, {{"calls", calls}}, "name");
        j.attributeEnd();
      }
    });
  };
  writeFields(j, plan, {{"buffers", writeBuffers}, {"params", writeParams}, {"functions", writeFunctions}});
  os << "\n";
  return success();
}

hymo_rt::PlanOp findRtPlan(ModuleOp module) {
  for (auto plan : module.getOps<hymo_rt::PlanOp>())
    return plan;
  return {};
}

} // namespace

bool replaceOutputFile(llvm::StringRef path, llvm::StringRef text, std::string *error) {
  llvm::sys::fs::file_status st;
  // The path itself, not what a link points to (/dev/stdout is a link).
  std::error_code missing = llvm::sys::fs::status(path, st, /*Follow=*/false);
  const bool direct = path == "-" || (!missing && !llvm::sys::fs::is_regular_file(st));
  const std::string written =
      direct ? path.str() : (path + ".tmp." + llvm::Twine(llvm::sys::Process::getProcessId())).str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(written, ec, llvm::sys::fs::OF_None);
    if (ec) {
      *error = "cannot write " + path.str() + ": " + ec.message();
      return false;
    }
    if (!direct && !missing)
      llvm::sys::fs::setPermissions(written, st.permissions());
    os << text;
    if (path == "-")
      os.flush();  // (standard output is not ours to close)
    else
      os.close();
    ec = os.error();
    os.clear_error();  // (reported here, not by LLVM at close)
  }
  if (!ec && !direct)
    ec = llvm::sys::fs::rename(written, path);
  if (ec) {
    if (!direct)
      llvm::sys::fs::remove(written);
    *error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  return true;
}

LogicalResult lowerToRt(ModuleOp module, PlanStats *stats) {
  if (findRtPlan(module))
    return module.emitError() << "hymo-lower-to-rt: the module is already lowered (it holds a hymo_rt.plan)";
  if (failed(PlanWriter(module).lower(stats)))
    return failure();
  // The functions are lowered: the plan is the module now.
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    func.erase();
  module->removeAttr(::hymo::kConfigAttr);
  return success();
}

LogicalResult writePlan(ModuleOp module, llvm::raw_ostream &os, PlanStats *stats) {
  hymo_rt::PlanOp rt = findRtPlan(module);
  // The hymo functions' plan goes straight from the writer: no parse back and
  // second serialisation, which held the plan twice more (hymo_750m: 599 ->
  // 375 MB and 1.65 -> 0.84 s in hymo-opt). The writer refuses what JSON
  // cannot hold (non-finite numbers), and the pass still checks the text as
  // the runtime reads it.
  if (!rt)
    return PlanWriter(module).write(os, stats);
  // One plan is one file: a second plan, or functions still beside it,
  // would be dropped without a word.
  auto plans = module.getOps<hymo_rt::PlanOp>();
  if (std::distance(plans.begin(), plans.end()) > 1)
    return module.emitError() << "plan: the module holds more than one hymo_rt.plan";
  auto funcs = module.getOps<func::FuncOp>();
  if (!funcs.empty())
    return (*funcs.begin()).emitError() << "plan: a func.func beside the hymo_rt.plan (lower it with the rest, "
                                           "or drop it)";
  return writeRtPlan(rt, os);
}

namespace {
struct LowerToRtPass : impl::HymoLowerToRtBase<LowerToRtPass> {
  using HymoLowerToRtBase::HymoLowerToRtBase;
  void runOnOperation() override {
    if (failed(lowerToRt(getOperation(), nullptr)))
      signalPassFailure();
  }
};
} // namespace

} // namespace mlir::hymo

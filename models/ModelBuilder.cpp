#include "models/ModelBuilder.h"

#include "dialects/Hymo/IR/HymoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <map>
#include <sstream>

using namespace mlir;
namespace hd = mlir::hymo;

namespace hymo {
namespace {

/// Builds @forward op by op. Parameters become block arguments as they are
/// first used, inserted before the trailing `tokens` argument.
class ForwardBuilder {
public:
  ForwardBuilder(MLIRContext &ctx, const Config &config)
      : ctx(ctx), cfg(config), m(config.model), b(&ctx),
        loc(NameLoc::get(StringAttr::get(&ctx, "hymo.forward"))) {
    ft = cfg.training.precision == "fp64" ? Type(b.getF64Type())
                                          : Type(b.getF32Type());
  }

  OwningOpRef<ModuleOp> build();

private:
  // --- state -----------------------------------------------------------------
  Value param(const std::string &name, ArrayRef<int64_t> shape,
              StringRef optimizer, bool buffer = false) {
    auto type = RankedTensorType::get(shape, ft);
    unsigned index = entry->getNumArguments() - 1; // before tokens
    Value v = entry->insertArgument(index, type, loc);
    NamedAttrList attrs;
    attrs.set(kNameAttr, b.getStringAttr(name));
    attrs.set(kRoleAttr, b.getStringAttr(buffer ? "buffer" : "param"));
    attrs.set(kOptimizerAttr, b.getStringAttr(optimizer));
    attrs.set(kInitAttr, b.getStringAttr(initRule(name, shape)));
    argAttrs.insert(argAttrs.begin() + index, attrs.getDictionary(&ctx));
    return v;
  }
  /// Spec §2.5: PyTorch's defaults (linear U(+-1/sqrt(in)), embedding
  /// N(0,1), norms 1) plus the inline values (router N(0, 0.006^2),
  /// A_log[h,s] = log(h+1), dt_bias 0, D_skip 1); buffers start at 0.
  static std::string initRule(const std::string &name, ArrayRef<int64_t> shape) {
    auto endsWith = [&](StringRef suffix) { return StringRef(name).ends_with(suffix); };
    auto number = [](double v) {
      std::ostringstream os;
      os.precision(17);
      os << v;
      return os.str();
    };
    if (name == "embed.weight")
      return "normal:1";
    if (endsWith(".gate.weight"))
      return "normal:0.006";
    if (endsWith(".A_log"))
      return "a_log";
    if (endsWith(".dt_bias") || endsWith(".gate_bias") || endsWith(".gate_ema"))
      return "zeros";
    if (endsWith(".D_skip") || shape.size() == 1)
      return "fill:1"; // D_skip and every norm weight
    return "uniform:" + number(1.0 / std::sqrt(static_cast<double>(shape.back())));
  }
  Value matrix(const std::string &name, int64_t out, int64_t in) {
    return param(name, {out, in}, "normuon");
  }
  Value adamw(const std::string &name, ArrayRef<int64_t> shape) {
    return param(name, shape, "adamw");
  }

  // --- op helpers --------------------------------------------------------------
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : ft);
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value linear(Value x, Value w) {
    SmallVector<int64_t> shape(shapeOf(x).drop_back());
    shape.push_back(shapeOf(w)[0]);
    return hd::LinearOp::create(b, loc, tensor(shape), x, w);
  }
  Value rmsNorm(Value x, Value w) {
    return hd::RmsNormOp::create(b, loc, x.getType(), x, w,
                                     b.getF64FloatAttr(m.norm_eps));
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    auto elt = cast<RankedTensorType>(x.getType()).getElementType();
    return hd::ReshapeOp::create(b, loc, tensor(shape, elt), x);
  }
  Value slice(Value x, ArrayRef<int64_t> start, ArrayRef<int64_t> limit) {
    SmallVector<int64_t> shape;
    for (size_t i = 0; i < start.size(); ++i)
      shape.push_back(limit[i] - start[i]);
    auto elt = cast<RankedTensorType>(x.getType()).getElementType();
    return hd::SliceOp::create(b, loc, tensor(shape, elt), x,
                                   b.getDenseI64ArrayAttr(start),
                                   b.getDenseI64ArrayAttr(limit));
  }
  /// x[..., lo:hi] on the last dim.
  Value sliceLast(Value x, int64_t lo, int64_t hi) {
    SmallVector<int64_t> start(shapeOf(x).size(), 0);
    SmallVector<int64_t> limit(shapeOf(x));
    start.back() = lo;
    limit.back() = hi;
    return slice(x, start, limit);
  }
  Value broadcast(Value x, ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
    return hd::BroadcastInDimOp::create(b, loc, tensor(shape), x,
                                            b.getDenseI64ArrayAttr(dims));
  }
  Value concat(ValueRange xs, int64_t dim) {
    SmallVector<int64_t> shape(shapeOf(xs.front()));
    shape[dim] = 0;
    for (Value x : xs)
      shape[dim] += shapeOf(x)[dim];
    return hd::ConcatOp::create(b, loc, tensor(shape), xs,
                                    b.getI64IntegerAttr(dim));
  }
  Value add(Value x, Value y) { return hd::AddOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return hd::MulOp::create(b, loc, x, y); }
  Value silu(Value x) { return hd::SiluOp::create(b, loc, x); }
  Value swiglu(Value x, Value w1, Value w2, Value w3) {
    return linear(mul(silu(linear(x, w1)), linear(x, w3)), w2);
  }
  /// Mean cross entropy of logits [B,L,V] against targets [B,L] i32.
  Value crossEntropy(Value logits, Value targets) {
    auto s = shapeOf(logits);
    int64_t n = s[0] * s[1];
    Value flat = reshape(logits, {n, s[2]});
    Value t = reshape(targets, {n});
    return hd::CrossEntropyOp::create(b, loc, tensor({}), flat, t);
  }

  // --- layers ------------------------------------------------------------------
  Value gdnMixer(const std::string &p, Value u);
  Value mlaMixer(const std::string &p, Value u);
  Value denseFfn(const std::string &p, Value u);
  Value moeFfn(const std::string &p, Value u);
  Value layer(const std::string &p, char kind, Value x);
  Value logitsOf(Value h) { return linear(rmsNorm(h, normF), head); }
  void buildLogitsFunction(func::FuncOp forward);

  MLIRContext &ctx;
  const Config &cfg;
  const ModelConfig &m;
  OpBuilder b;
  Location loc;
  Type ft;
  Block *entry = nullptr;
  SmallVector<Attribute> argAttrs;
  Value tokens, embed, head, normF;
  SmallVector<Value> counts;
  SmallVector<std::string> countNames;
};

Value ForwardBuilder::gdnMixer(const std::string &p, Value u) {
  const GdnConfig &g = m.gdn;
  int64_t B = shapeOf(u)[0], T = shapeOf(u)[1], H = g.n_heads,
          D = g.head_dim, S = g.state_dim;
  Value wv = matrix(p + "W_v.weight", H * D, m.dim);
  Value wb = matrix(p + "W_b.weight", H * S, m.dim);
  Value wc = matrix(p + "W_c.weight", H * S, m.dim);
  Value wg = matrix(p + "W_g.weight", H, m.dim);
  Value wz = matrix(p + "W_z.weight", H * D, m.dim);
  Value wo = matrix(p + "W_o.weight", m.dim, H * D);
  Value dtBias = adamw(p + "dt_bias", {H});
  Value aLog = adamw(p + "A_log", {H, S});
  Value dSkip = adamw(p + "D_skip", {H});
  Value normY = adamw(p + "norm_y.weight", {D});

  Value v = reshape(linear(u, wv), {B, T, H, D});
  Value bk = reshape(linear(u, wb), {B, T, H, S});
  Value c = reshape(linear(u, wc), {B, T, H, S});
  Value gate = hd::SigmoidOp::create(
      b, loc, add(linear(u, wg), broadcast(dtBias, {B, T, H}, {2})));
  Value a = hd::NegOp::create(b, loc, hd::ExpOp::create(b, loc, aLog));
  Value o = hd::GdnRecurrenceOp::create(b, loc, v.getType(), v, bk, c, gate,
                                            a, b.getI64IntegerAttr(g.chunk_size));
  Value y = add(o, mul(v, broadcast(dSkip, {B, T, H, D}, {2})));
  y = rmsNorm(y, normY);
  Value z = silu(reshape(linear(u, wz), {B, T, H, D}));
  y = reshape(mul(y, z), {B, T, H * D});
  return linear(y, wo);
}

Value ForwardBuilder::mlaMixer(const std::string &p, Value u) {
  const MlaConfig &a = m.mla;
  int64_t B = shapeOf(u)[0], T = shapeOf(u)[1], H = a.n_heads;
  int64_t dn = a.qk_nope_head_dim, dr = a.qk_rope_head_dim, dv = a.v_head_dim;
  int64_t rq = a.q_lora_rank, rkv = a.kv_lora_rank;
  Value wqa = matrix(p + "W_qa.weight", rq, m.dim);
  Value normQ = adamw(p + "norm_q.weight", {rq});
  Value wqb = matrix(p + "W_qb.weight", H * (dn + dr), rq);
  Value wkva = matrix(p + "W_kva.weight", rkv + dr, m.dim);
  Value normKv = adamw(p + "norm_kv.weight", {rkv});
  Value wkvb = matrix(p + "W_kvb.weight", H * (dn + dv), rkv);
  Value wo = matrix(p + "W_o.weight", m.dim, H * dv);

  Value q = reshape(linear(rmsNorm(linear(u, wqa), normQ), wqb),
                    {B, T, H, dn + dr});
  Value qNope = sliceLast(q, 0, dn);
  Value qRope = sliceLast(q, dn, dn + dr);
  Value kv = linear(u, wkva);
  Value cKv = sliceLast(kv, 0, rkv);
  Value kRope = reshape(sliceLast(kv, rkv, rkv + dr), {B, T, 1, dr});
  Value kvb = reshape(linear(rmsNorm(cKv, normKv), wkvb), {B, T, H, dn + dv});
  Value kNope = sliceLast(kvb, 0, dn);
  Value v = sliceLast(kvb, dn, dn + dv);
  auto theta = b.getF64FloatAttr(m.rope_theta);
  qRope = hd::RopeOp::create(b, loc, qRope, theta, b.getBoolAttr(false));
  kRope = hd::RopeOp::create(b, loc, kRope, theta, b.getBoolAttr(false));
  kRope = broadcast(kRope, {B, T, H, dr}, {0, 1, 2, 3});
  Value qq = concat({qNope, qRope}, 3);
  Value kk = concat({kNope, kRope}, 3);
  double scale = 1.0 / std::sqrt(static_cast<double>(dn + dr));
  Value att = hd::CausalAttentionOp::create(b, loc, tensor({B, T, H, dv}), qq,
                                                kk, v, b.getF64FloatAttr(scale));
  return linear(reshape(att, {B, T, H * dv}), wo);
}

Value ForwardBuilder::denseFfn(const std::string &p, Value u) {
  Value w1 = matrix(p + "W1.weight", m.ffn_hidden, m.dim);
  Value w2 = matrix(p + "W2.weight", m.dim, m.ffn_hidden);
  Value w3 = matrix(p + "W3.weight", m.ffn_hidden, m.dim);
  return swiglu(u, w1, w2, w3);
}

Value ForwardBuilder::moeFfn(const std::string &p, Value u) {
  const MoeConfig &e = m.moe;
  int64_t B = shapeOf(u)[0], T = shapeOf(u)[1], N = B * T, E = e.n_routed,
          K = e.top_k, Hd = e.expert_hidden;
  Value gate = adamw(p + "gate.weight", {E, m.dim});
  Value bias = param(p + "gate_bias", {E}, "none", /*buffer=*/true);
  param(p + "gate_ema", {E}, "none", /*buffer=*/true);
  Value w1 = adamw(p + "experts.W1", {E, Hd, m.dim});
  Value w2 = adamw(p + "experts.W2", {E, m.dim, Hd});
  Value w3 = adamw(p + "experts.W3", {E, Hd, m.dim});

  Value x = reshape(u, {N, m.dim});
  Value probs = hd::SoftmaxOp::create(b, loc, linear(x, gate));
  auto route = hd::MoeRouteOp::create(
      b, loc, tensor({N, K}, b.getI32Type()), tensor({N, K}), probs, bias,
      b.getI64IntegerAttr(K));
  route->setAttr(kLayerAttr, b.getStringAttr(p.substr(0, p.size() - 1)));
  int64_t capacity = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(e.capacity_factor * N * K / E)));
  auto dispatch = hd::MoeDispatchOp::create(
      b, loc, tensor({E, capacity, m.dim}), tensor({N, K}, b.getI32Type()), x,
      route.getIndices(), b.getI64IntegerAttr(E), b.getI64IntegerAttr(capacity));
  Value xe = dispatch.getExpertInputs();
  auto grouped = [&](Value in, Value w) -> Value {
    return hd::GroupedLinearOp::create(
        b, loc, tensor({E, capacity, shapeOf(w)[1]}), in, w);
  };
  Value h = mul(silu(grouped(xe, w1)), grouped(xe, w3));
  Value ye = grouped(h, w2);
  Value out = hd::MoeCombineOp::create(b, loc, tensor({N, m.dim}), ye,
                                           dispatch.getSlots(),
                                           route.getWeights());
  if (e.n_shared > 0) {
    int64_t Hs = e.n_shared * Hd;
    Value s1 = adamw(p + "shared.W1.weight", {Hs, m.dim});
    Value s2 = adamw(p + "shared.W2.weight", {m.dim, Hs});
    Value s3 = adamw(p + "shared.W3.weight", {Hs, m.dim});
    out = add(swiglu(x, s1, s2, s3), out);
  }
  counts.push_back(hd::MoeCountOp::create(b, loc, tensor({E}, b.getF32Type()),
                                              route.getIndices(),
                                              b.getI64IntegerAttr(E)));
  countNames.push_back(p + "counts");
  return reshape(out, {B, T, m.dim});
}

Value ForwardBuilder::layer(const std::string &p, char kind, Value x) {
  Value n1 = adamw(p + "norm1.weight", {m.dim});
  Value mixed = kind == 'G' ? gdnMixer(p + "mixer.", rmsNorm(x, n1))
                            : mlaMixer(p + "mixer.", rmsNorm(x, n1));
  x = add(x, mixed);
  Value n2 = adamw(p + "norm2.weight", {m.dim});
  Value ffn = kind == 'G' ? denseFfn(p + "ffn.", rmsNorm(x, n2))
                          : moeFfn(p + "ffn.", rmsNorm(x, n2));
  return add(x, ffn);
}

OwningOpRef<ModuleOp> ForwardBuilder::build() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(kConfigAttr, b.getStringAttr(configToJson(cfg)));
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, "forward", b.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  int64_t B = cfg.training.micro_batch_size, T = cfg.training.seq_len;
  auto tokType = tensor({B, T}, b.getI32Type());
  tokens = entry->addArgument(tokType, loc);
  {
    NamedAttrList attrs;
    attrs.set(kNameAttr, b.getStringAttr("tokens"));
    attrs.set(kRoleAttr, b.getStringAttr("input"));
    argAttrs.push_back(attrs.getDictionary(&ctx));
  }
  b.setInsertionPointToStart(entry);

  embed = adamw("embed.weight", {m.vocab_size, m.dim});
  head = adamw("head.weight", {m.vocab_size, m.dim});
  normF = adamw("norm_f.weight", {m.dim});

  Value x = hd::EmbeddingOp::create(b, loc, tensor({B, T, m.dim}), embed, tokens);
  for (int64_t i = 0; i < m.n_layers; ++i)
    x = layer("layers." + std::to_string(i) + ".", m.layerKind(i), x);

  Value mainLogits = logitsOf(x);
  mainLogits.getDefiningOp()->setAttr(kMainLogitsAttr, b.getUnitAttr());
  Value lossMain = crossEntropy(slice(mainLogits, {0, 0, 0}, {B, T - 1, m.vocab_size}),
                                slice(tokens, {0, 1}, {B, T}));
  Value loss = lossMain;
  SmallVector<Value> mtpLosses;
  Value h = x;
  for (int64_t k = 1; k <= m.mtp.depth; ++k) {
    std::string p = "mtp." + std::to_string(k - 1) + ".";
    int64_t L = T - k;
    Value normH = adamw(p + "norm_h.weight", {m.dim});
    Value normE = adamw(p + "norm_e.weight", {m.dim});
    Value proj = matrix(p + "proj.weight", m.dim, 2 * m.dim);
    Value hPrev = slice(h, {0, 0, 0}, {B, L, m.dim});
    Value emb = hd::EmbeddingOp::create(b, loc, tensor({B, L, m.dim}), embed,
                                            slice(tokens, {0, k}, {B, k + L}));
    Value in = linear(concat({rmsNorm(hPrev, normH), rmsNorm(emb, normE)}, 2), proj);
    h = layer(p + "layer.", 'G', in);
    Value lossK = crossEntropy(
        slice(logitsOf(h), {0, 0, 0}, {B, L - 1, m.vocab_size}),
        slice(tokens, {0, k + 1}, {B, T}));
    mtpLosses.push_back(lossK);
    Value w = hd::ConstantOp::create(
        b, loc, DenseElementsAttr::get(tensor({}), b.getFloatAttr(ft, m.mtp.weights[k - 1])));
    loss = add(loss, mul(w, lossK));
  }

  SmallVector<Value> results{loss, lossMain};
  SmallVector<std::string> resultNames{"loss", "loss_main"};
  for (size_t k = 0; k < mtpLosses.size(); ++k) {
    results.push_back(mtpLosses[k]);
    resultNames.push_back("loss_mtp." + std::to_string(k));
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    results.push_back(counts[i]);
    resultNames.push_back(countNames[i]);
  }
  func::ReturnOp::create(b, loc, results);

  SmallVector<Type> argTypes(entry->getArgumentTypes());
  SmallVector<Type> resTypes;
  for (Value r : results)
    resTypes.push_back(r.getType());
  func.setType(b.getFunctionType(argTypes, resTypes));
  func.setAllArgAttrs(argAttrs);
  SmallVector<Attribute> resAttrs;
  for (const std::string &n : resultNames)
    resAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(kNameAttr, b.getStringAttr(n))));
  func.setAllResultAttrs(resAttrs);
  buildLogitsFunction(func);
  return module;
}

/// @logits: the same arguments, the trunk's logits [B,T,V] (for eval tools
/// and the PyTorch interop check); everything else of the forward is dead
/// and removed.
void ForwardBuilder::buildLogitsFunction(func::FuncOp forward) {
  b.setInsertionPointAfter(forward);
  auto fn = cast<func::FuncOp>(b.clone(*forward));
  fn.setSymName("logits");
  Block &body = fn.getBody().front();
  Value logits;
  for (Operation &op : body)
    if (op.hasAttr(kMainLogitsAttr))
      logits = op.getResult(0);
  Operation *ret = body.getTerminator();
  b.setInsertionPoint(ret);
  func::ReturnOp::create(b, loc, logits);
  ret->erase();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty())
      op->erase();
  fn.setType(b.getFunctionType(fn.getArgumentTypes(), {logits.getType()}));
  SmallVector<Attribute> resAttrs{
      b.getDictionaryAttr(b.getNamedAttr(kNameAttr, b.getStringAttr("logits")))};
  fn.setAllResultAttrs(resAttrs);
}

} // namespace

OwningOpRef<ModuleOp> buildForwardModule(MLIRContext &context,
                                         const Config &config) {
  context.loadDialect<hd::HymoDialect, func::FuncDialect>();
  return ForwardBuilder(context, config).build();
}

bool readParamTable(func::FuncOp forward, ParamTable &table,
                    std::string &error) {
  table = ParamTable();
  std::map<std::string, int64_t> topK;
  forward.walk([&](hd::MoeRouteOp op) {
    if (auto layer = op->getAttrOfType<StringAttr>(kLayerAttr))
      topK[layer.str()] = op.getTopK();
  });
  int64_t inactive = 0;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, kNameAttr);
    auto role = forward.getArgAttrOfType<StringAttr>(i, kRoleAttr);
    if (!name || !role) {
      error = "argument " + std::to_string(i) + " of @" +
              forward.getSymName().str() + " has no hymo.name/hymo.role";
      return false;
    }
    if (role.getValue() == "input")
      continue;
    auto opt = forward.getArgAttrOfType<StringAttr>(i, kOptimizerAttr);
    if (!opt) {
      error = "argument " + name.str() + " has no hymo.optimizer";
      return false;
    }
    auto type = cast<RankedTensorType>(forward.getArgument(i).getType());
    ParamEntry e{name.str(), std::vector<int64_t>(type.getShape().begin(), type.getShape().end()),
                 opt.str(), role.getValue() == "buffer"};
    if (!e.isBuffer) {
      table.total += type.getNumElements();
      size_t at = e.name.find(".experts.");
      if (at != std::string::npos) {
        std::string layer = e.name.substr(0, at);
        auto it = topK.find(layer);
        if (it == topK.end()) {
          error = "no hymo.moe_route for the experts " + e.name;
          return false;
        }
        int64_t experts = type.getDimSize(0);
        inactive += (experts - it->second) * (type.getNumElements() / experts);
      }
    }
    table.entries.push_back(std::move(e));
  }
  table.active = table.total - inactive;
  return true;
}

std::string formatParamTable(const ParamTable &table) {
  std::ostringstream os;
  for (const ParamEntry &e : table.entries) {
    os << e.name << ' ';
    for (size_t i = 0; i < e.shape.size(); ++i)
      os << (i ? "x" : "") << e.shape[i];
    os << ' ' << e.optimizer << '\n';
  }
  os << "total " << table.total << '\n' << "active " << table.active << '\n';
  return os.str();
}

} // namespace hymo

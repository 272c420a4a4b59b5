// @decode_step: one token of the HyMo forward (spec §2) in recurrent form.
// Per G layer the GDN state h (B,H,S,D) is carried (hymo.gdn_step); per M
// layer the MLA latent cache c_kv (B,Tmax,r_kv) and the rotated k_rope
// (B,Tmax,dr) (hymo.cache_write, hymo.latent_attention_step). Everything
// else is the forward's ops on [B, ...] instead of [B, T, ...]. MTP is not
// used. The MoE routes the B tokens of the step like a forward of N = B
// tokens: capacity = max(1, floor(capacity_factor * B * top_k / E)); at
// B = 1 top_k distinct experts each get one assignment, so nothing drops.
#include "models/DecodeBuilder.h"
#include "models/ModelBuilder.h"

#include "dialects/Hymo/IR/HymoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

using namespace mlir;
namespace hd = mlir::hymo;

namespace hymo {

std::string decodeGdnStateName(int64_t i) {
  return "decode.layers." + std::to_string(i) + ".gdn_state";
}
std::string decodeCkvCacheName(int64_t i) {
  return "decode.layers." + std::to_string(i) + ".c_kv";
}
std::string decodeKropeCacheName(int64_t i) {
  return "decode.layers." + std::to_string(i) + ".k_rope";
}

namespace {

class DecodeBuilder {
public:
  DecodeBuilder(ModuleOp module, const Config &config, const DecodeOptions &o,
                func::FuncOp forward)
      : module(module), ctx(*module.getContext()), cfg(config), m(config.model),
        b(&ctx), loc(NameLoc::get(StringAttr::get(&ctx, "hymo.decode"))),
        forward(forward), B(o.batch),
        Tmax(o.maxLen > 0 ? o.maxLen : config.training.seq_len) {
    ft = cfg.training.precision == "fp64" ? Type(b.getF64Type())
                                          : Type(b.getF32Type());
  }

  void build();

private:
  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : ft);
  }
  static ArrayRef<int64_t> shapeOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  /// A parameter or buffer of @forward, as an argument of @decode_step
  /// (same name, type and attributes: EmitPlan binds both to one buffer).
  /// Every one of @forward's parameters and buffers is an argument, used or
  /// not (MTP, gate_ema), so that a decode-only plan has the training
  /// plan's parameter table and loads its checkpoints.
  void addForwardParams() {
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      auto n = forward.getArgAttrOfType<StringAttr>(i, kNameAttr);
      auto role = forward.getArgAttrOfType<StringAttr>(i, kRoleAttr);
      if (!n || !role || role.getValue() == "input")
        continue;
      params[n.getValue()] = entry->addArgument(forward.getArgument(i).getType(), loc);
      argAttrs.push_back(forward.getArgAttrDict(i));
    }
  }
  Value param(const std::string &name) {
    auto it = params.find(name);
    if (it == params.end())
      llvm::report_fatal_error(llvm::Twine("decode: @forward has no argument ") + name);
    return it->second;
  }
  Value argument(const std::string &name, StringRef role, RankedTensorType type) {
    Value v = entry->addArgument(type, loc);
    NamedAttrList attrs;
    attrs.set(kNameAttr, b.getStringAttr(name));
    attrs.set(kRoleAttr, b.getStringAttr(role));
    if (role == "state") {
      attrs.set(kOptimizerAttr, b.getStringAttr("none"));
      attrs.set(kInitAttr, b.getStringAttr("zeros"));
    }
    argAttrs.push_back(attrs.getDictionary(&ctx));
    return v;
  }
  Value state(const std::string &name, ArrayRef<int64_t> shape) {
    Value v = argument(name, "state", tensor(shape));
    stateNames.push_back(name);
    return v;
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
  Value sliceLast(Value x, int64_t lo, int64_t hi) {
    SmallVector<int64_t> start(shapeOf(x).size(), 0), limit(shapeOf(x)),
        shape(shapeOf(x));
    start.back() = lo;
    limit.back() = hi;
    shape.back() = hi - lo;
    return hd::SliceOp::create(b, loc, tensor(shape), x,
                               b.getDenseI64ArrayAttr(start),
                               b.getDenseI64ArrayAttr(limit));
  }
  Value broadcast(Value x, ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
    return hd::BroadcastInDimOp::create(b, loc, tensor(shape), x,
                                        b.getDenseI64ArrayAttr(dims));
  }
  Value add(Value x, Value y) { return hd::AddOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return hd::MulOp::create(b, loc, x, y); }
  Value silu(Value x) { return hd::SiluOp::create(b, loc, x); }
  Value swiglu(Value x, Value w1, Value w2, Value w3) {
    return linear(mul(silu(linear(x, w1)), linear(x, w3)), w2);
  }

  Value gdnMixer(int64_t i, const std::string &p, Value u);
  Value mlaMixer(int64_t i, const std::string &p, Value u);
  Value denseFfn(const std::string &p, Value u) {
    Value w1 = param(p + "W1.weight"), w2 = param(p + "W2.weight"),
          w3 = param(p + "W3.weight");
    return swiglu(u, w1, w2, w3);
  }
  Value moeFfn(const std::string &p, Value u);

  ModuleOp module;
  MLIRContext &ctx;
  const Config &cfg;
  const ModelConfig &m;
  OpBuilder b;
  Location loc;
  func::FuncOp forward;
  int64_t B, Tmax;
  Type ft;
  Block *entry = nullptr;
  SmallVector<Attribute> argAttrs;
  Value pos;
  llvm::StringMap<Value> params;
  SmallVector<Value> newStates;
  SmallVector<std::string> stateNames;
};

Value DecodeBuilder::gdnMixer(int64_t i, const std::string &p, Value u) {
  const GdnConfig &g = m.gdn;
  int64_t H = g.n_heads, D = g.head_dim, S = g.state_dim;
  Value wv = param(p + "W_v.weight"), wb = param(p + "W_b.weight"),
        wc = param(p + "W_c.weight"), wg = param(p + "W_g.weight"),
        wz = param(p + "W_z.weight"), wo = param(p + "W_o.weight");
  Value dtBias = param(p + "dt_bias"), aLog = param(p + "A_log"),
        dSkip = param(p + "D_skip"), normY = param(p + "norm_y.weight");
  Value h = state(decodeGdnStateName(i), {B, H, S, D});

  Value v = reshape(linear(u, wv), {B, H, D});
  Value bk = reshape(linear(u, wb), {B, H, S});
  Value c = reshape(linear(u, wc), {B, H, S});
  Value gate = hd::SigmoidOp::create(
      b, loc, add(linear(u, wg), broadcast(dtBias, {B, H}, {1})));
  Value a = hd::NegOp::create(b, loc, hd::ExpOp::create(b, loc, aLog));
  auto step = hd::GdnStepOp::create(b, loc, v.getType(), h.getType(), v, bk,
                                    c, gate, a, h);
  newStates.push_back(step.getNewState());
  Value y = add(step.getOut(), mul(v, broadcast(dSkip, {B, H, D}, {1})));
  y = rmsNorm(y, normY);
  Value z = silu(reshape(linear(u, wz), {B, H, D}));
  y = reshape(mul(y, z), {B, H * D});
  return linear(y, wo);
}

Value DecodeBuilder::mlaMixer(int64_t i, const std::string &p, Value u) {
  const MlaConfig &a = m.mla;
  int64_t H = a.n_heads, dn = a.qk_nope_head_dim, dr = a.qk_rope_head_dim;
  int64_t dv = a.v_head_dim, rkv = a.kv_lora_rank;
  Value wqa = param(p + "W_qa.weight"), normQ = param(p + "norm_q.weight"),
        wqb = param(p + "W_qb.weight"), wkva = param(p + "W_kva.weight"),
        normKv = param(p + "norm_kv.weight"), wkvb = param(p + "W_kvb.weight"),
        wo = param(p + "W_o.weight");
  Value ckvCache = state(decodeCkvCacheName(i), {B, Tmax, rkv});
  Value kropeCache = state(decodeKropeCacheName(i), {B, Tmax, dr});

  Value q = reshape(linear(rmsNorm(linear(u, wqa), normQ), wqb), {B, H, dn + dr});
  Value qNope = sliceLast(q, 0, dn);
  auto theta = b.getF64FloatAttr(m.rope_theta);
  Value qRope = hd::RopeAtOp::create(b, loc, tensor({B, H, dr}),
                                     sliceLast(q, dn, dn + dr), pos, theta);
  Value kv = linear(u, wkva);
  Value cKv = sliceLast(kv, 0, rkv);
  Value kRope = reshape(sliceLast(kv, rkv, rkv + dr), {B, 1, dr});
  kRope = reshape(hd::RopeAtOp::create(b, loc, tensor({B, 1, dr}), kRope, pos, theta),
                  {B, dr});
  Value ckv2 = hd::CacheWriteOp::create(b, loc, ckvCache.getType(), ckvCache, cKv, pos);
  Value kr2 = hd::CacheWriteOp::create(b, loc, kropeCache.getType(), kropeCache, kRope, pos);
  newStates.push_back(ckv2);
  newStates.push_back(kr2);
  double scale = 1.0 / std::sqrt(static_cast<double>(dn + dr));
  Value att = hd::LatentAttentionStepOp::create(
      b, loc, tensor({B, H, dv}), qNope, qRope, ckv2, kr2, normKv, wkvb, pos,
      b.getF64FloatAttr(scale), b.getF64FloatAttr(m.norm_eps));
  return linear(reshape(att, {B, H * dv}), wo);
}

Value DecodeBuilder::moeFfn(const std::string &p, Value x) {
  const MoeConfig &e = m.moe;
  int64_t N = B, E = e.n_routed, K = e.top_k;
  Value gate = param(p + "gate.weight"), bias = param(p + "gate_bias");
  Value w1 = param(p + "experts.W1"), w2 = param(p + "experts.W2"),
        w3 = param(p + "experts.W3");
  Value probs = hd::SoftmaxOp::create(b, loc, linear(x, gate));
  auto route = hd::MoeRouteOp::create(b, loc, tensor({N, K}, b.getI32Type()),
                                      tensor({N, K}), probs, bias,
                                      b.getI64IntegerAttr(K));
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
  Value hh = mul(silu(grouped(xe, w1)), grouped(xe, w3));
  Value out = hd::MoeCombineOp::create(b, loc, tensor({N, m.dim}), grouped(hh, w2),
                                       dispatch.getSlots(), route.getWeights());
  if (e.n_shared > 0) {
    Value s1 = param(p + "shared.W1.weight"), s2 = param(p + "shared.W2.weight"),
          s3 = param(p + "shared.W3.weight");
    out = add(swiglu(x, s1, s2, s3), out);
  }
  return out;
}

void DecodeBuilder::build() {
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, "decode_step", b.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Value token = argument(kDecodeToken, "input", tensor({B}, b.getI32Type()));
  pos = argument(kDecodePos, "input", tensor({}, b.getI32Type()));
  addForwardParams();

  Value embed = param("embed.weight"), head = param("head.weight"),
        normF = param("norm_f.weight");
  Value x = hd::EmbeddingOp::create(b, loc, tensor({B, m.dim}), embed, token);
  for (int64_t i = 0; i < m.n_layers; ++i) {
    std::string p = "layers." + std::to_string(i) + ".";
    char kind = m.layerKind(i);
    Value n1 = param(p + "norm1.weight");
    Value u = rmsNorm(x, n1);
    x = add(x, kind == 'G' ? gdnMixer(i, p + "mixer.", u) : mlaMixer(i, p + "mixer.", u));
    Value n2 = param(p + "norm2.weight");
    Value u2 = rmsNorm(x, n2);
    x = add(x, kind == 'G' ? denseFfn(p + "ffn.", u2) : moeFfn(p + "ffn.", u2));
  }
  Value logits = linear(rmsNorm(x, normF), head);

  SmallVector<Value> results{logits};
  SmallVector<Attribute> resAttrs{
      b.getDictionaryAttr(b.getNamedAttr(kNameAttr, b.getStringAttr("logits")))};
  for (size_t k = 0; k < newStates.size(); ++k) {
    results.push_back(newStates[k]);
    resAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kNameAttr, b.getStringAttr(stateNames[k] + ".new")),
         b.getNamedAttr("hymo.update", b.getStringAttr(stateNames[k]))}));
  }
  func::ReturnOp::create(b, loc, results);
  SmallVector<Type> resTypes;
  for (Value r : results)
    resTypes.push_back(r.getType());
  func.setType(b.getFunctionType(entry->getArgumentTypes(), resTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resAttrs);
}

} // namespace

bool addDecodeStep(ModuleOp module, const Config &config,
                   const DecodeOptions &options, std::string &error) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward) {
    error = "--hymo-decode needs the module of --hymo-model (no @forward)";
    return false;
  }
  if (module.lookupSymbol<func::FuncOp>("decode_step")) {
    error = "the module already has @decode_step";
    return false;
  }
  if (options.batch < 1) {
    error = "--hymo-decode-batch must be >= 1, got " + std::to_string(options.batch);
    return false;
  }
  if (options.maxLen < 0) {
    error = "--hymo-decode-max-len must be >= 1 (0: training.seq_len), got " +
            std::to_string(options.maxLen);
    return false;
  }
  // The options times the config's sizes: a cache [batch, max-len,
  // kv_lora_rank] past int64 wrapped the plan's arena offsets.
  error = validateDecodeSizes(config, options.batch, options.maxLen);
  if (!error.empty())
    return false;
  DecodeBuilder(module, config, options, forward).build();
  return true;
}

} // namespace hymo

// Plan loader: JSON text -> Plan. Checks the shape of the document (every
// field present, of the right JSON type, no unknown fields) and hands the
// result to validate_plan (plan_validate.cc) for the semantic checks. Every
// message names the offending field: "plan: <path>: <what>".
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hymo/rt/api.h"
#include "plan_internal.h"

namespace hymo::rt {
namespace {

using json = nlohmann::ordered_json;

Status fail(const std::string& path, const std::string& msg) {
  return plan_error(path, msg);
}

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "the integer " + j.dump();
    case json::value_t::number_float: return "the number " + j.dump();
    case json::value_t::string: {
      std::string s = j.dump();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "the string " + s;
    }
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

Status get_int(const json& j, const std::string& path, int64_t* out) {
  if (!j.is_number_integer())
    return fail(path, "expected an integer, found " + describe(j));
  if (j.is_number_unsigned() &&
      j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    return fail(path, "integer " + j.dump() + " does not fit in int64");
  *out = j.get<int64_t>();
  return ok_status();
}

Status get_number(const json& j, const std::string& path, double* out) {
  if (!j.is_number())
    return fail(path, "expected a number, found " + describe(j));
  *out = j.get<double>();
  return ok_status();
}

Status get_string(const json& j, const std::string& path, std::string* out) {
  if (!j.is_string())
    return fail(path, "expected a string, found " + describe(j));
  *out = j.get<std::string>();
  return ok_status();
}

Status get_int_list(const json& j, const std::string& path,
                    std::vector<int64_t>* out) {
  if (!j.is_array())
    return fail(path, "expected an array of integers, found " + describe(j));
  out->clear();
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t v;
    HYMO_RETURN_IF_ERROR(get_int(j[i], path + "[" + std::to_string(i) + "]", &v));
    out->push_back(v);
  }
  return ok_status();
}

Status get_number_list(const json& j, const std::string& path,
                       std::vector<double>* out) {
  if (!j.is_array())
    return fail(path, "expected an array of numbers, found " + describe(j));
  out->clear();
  out->reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    double v;
    HYMO_RETURN_IF_ERROR(get_number(j[i], path + "[" + std::to_string(i) + "]", &v));
    out->push_back(v);
  }
  return ok_status();
}

// Checks `obj` is an object with the `required` keys and no keys outside
// required + optional.
Status check_keys(const json& obj, const std::string& path,
                  std::initializer_list<const char*> required,
                  std::initializer_list<const char*> optional) {
  if (!obj.is_object())
    return fail(path, "expected an object, found " + describe(obj));
  for (const char* k : required)
    if (!obj.contains(k))
      return fail(join_path(path, k), "missing required field");
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (const char* k : required) known = known || it.key() == k;
    for (const char* k : optional) known = known || it.key() == k;
    if (!known) {
      std::string allowed;
      for (const char* k : required) allowed += std::string(allowed.empty() ? "" : ", ") + k;
      for (const char* k : optional) allowed += std::string(allowed.empty() ? "" : ", ") + k;
      return fail(join_path(path, it.key()),
                  "unknown field (expected one of: " + allowed + ")");
    }
  }
  return ok_status();
}

Status parse_dtype(const json& j, const std::string& path, DType* out) {
  std::string s;
  HYMO_RETURN_IF_ERROR(get_string(j, path, &s));
  if (s == "f32") *out = DType::kF32;
  else if (s == "f64") *out = DType::kF64;
  else if (s == "bf16") *out = DType::kBF16;
  else if (s == "i32") *out = DType::kI32;
  else return fail(path, "expected a dtype (f32, f64, bf16, i32), found \"" + s + "\"");
  return ok_status();
}

Status parse_storage(const json& j, const std::string& path, StorageKind* out) {
  std::string s;
  HYMO_RETURN_IF_ERROR(get_string(j, path, &s));
  if (s == "param") *out = StorageKind::kParam;
  else if (s == "state") *out = StorageKind::kState;
  else if (s == "input") *out = StorageKind::kInput;
  else if (s == "arena") *out = StorageKind::kArena;
  else if (s == "constant") *out = StorageKind::kConstant;
  else
    return fail(path, "expected a storage kind (param, state, input, arena, "
                      "constant), found \"" + s + "\"");
  return ok_status();
}

Status parse_init(const json& j, const std::string& path, BufferInit* out) {
  if (!j.is_object())
    return fail(path, "expected an object, found " + describe(j));
  if (j.contains("fill")) {
    HYMO_RETURN_IF_ERROR(check_keys(j, path, {"fill"}, {}));
    out->kind = BufferInit::Kind::kFill;
    return get_number(j["fill"], join_path(path, "fill"), &out->fill);
  }
  if (j.contains("data")) {
    HYMO_RETURN_IF_ERROR(check_keys(j, path, {"data"}, {}));
    out->kind = BufferInit::Kind::kData;
    return get_number_list(j["data"], join_path(path, "data"), &out->data);
  }
  if (j.contains("uniform")) {
    HYMO_RETURN_IF_ERROR(check_keys(j, path, {"uniform", "seed"}, {}));
    out->kind = BufferInit::Kind::kUniform;
    std::vector<double> range;
    HYMO_RETURN_IF_ERROR(get_number_list(j["uniform"], join_path(path, "uniform"), &range));
    if (range.size() != 2)
      return fail(join_path(path, "uniform"),
                  "expected [low, high], found " + std::to_string(range.size()) + " numbers");
    out->low = range[0];
    out->high = range[1];
    int64_t seed;
    HYMO_RETURN_IF_ERROR(get_int(j["seed"], join_path(path, "seed"), &seed));
    if (seed < 0) return fail(join_path(path, "seed"), "expected a seed >= 0, found " + std::to_string(seed));
    out->seed = uint64_t(seed);
    return ok_status();
  }
  if (j.contains("normal")) {
    HYMO_RETURN_IF_ERROR(check_keys(j, path, {"normal", "seed"}, {}));
    out->kind = BufferInit::Kind::kNormal;
    std::vector<double> ms;
    HYMO_RETURN_IF_ERROR(get_number_list(j["normal"], join_path(path, "normal"), &ms));
    if (ms.size() != 2)
      return fail(join_path(path, "normal"),
                  "expected [mean, std], found " + std::to_string(ms.size()) + " numbers");
    out->mean = ms[0];
    out->stddev = ms[1];
    int64_t seed;
    HYMO_RETURN_IF_ERROR(get_int(j["seed"], join_path(path, "seed"), &seed));
    if (seed < 0) return fail(join_path(path, "seed"), "expected a seed >= 0, found " + std::to_string(seed));
    out->seed = uint64_t(seed);
    return ok_status();
  }
  if (j.contains("zeros")) {
    HYMO_RETURN_IF_ERROR(check_keys(j, path, {"zeros"}, {}));
    if (!j["zeros"].is_boolean() || !j["zeros"].get<bool>())
      return fail(join_path(path, "zeros"), "expected true, found " + describe(j["zeros"]));
    out->kind = BufferInit::Kind::kZeros;
    return ok_status();
  }
  return fail(path, "expected one of {\"zeros\": true}, {\"fill\": x}, "
                    "{\"data\": [...]}, {\"uniform\": [lo, hi], \"seed\": s}, "
                    "{\"normal\": [mean, std], \"seed\": s}");
}

Status parse_buffer(const json& j, const std::string& path, BufferDesc* b) {
  HYMO_RETURN_IF_ERROR(check_keys(j, path, {"id", "name", "dtype", "shape", "storage"},
                                  {"offset", "data", "init"}));
  HYMO_RETURN_IF_ERROR(get_int(j["id"], join_path(path, "id"), &b->id));
  HYMO_RETURN_IF_ERROR(get_string(j["name"], join_path(path, "name"), &b->name));
  HYMO_RETURN_IF_ERROR(parse_dtype(j["dtype"], join_path(path, "dtype"), &b->dtype));
  HYMO_RETURN_IF_ERROR(get_int_list(j["shape"], join_path(path, "shape"), &b->shape));
  HYMO_RETURN_IF_ERROR(parse_storage(j["storage"], join_path(path, "storage"), &b->storage));
  const std::string kind = storage_name(b->storage);
  if (b->storage == StorageKind::kArena) {
    if (!j.contains("offset"))
      return fail(join_path(path, "offset"), "missing required field (arena buffers have a byte offset)");
    HYMO_RETURN_IF_ERROR(get_int(j["offset"], join_path(path, "offset"), &b->offset));
  } else if (j.contains("offset")) {
    return fail(join_path(path, "offset"), "only arena buffers have an offset, this one is " + kind);
  }
  if (b->storage == StorageKind::kConstant) {
    if (!j.contains("data"))
      return fail(join_path(path, "data"), "missing required field (constant buffers carry their data)");
    HYMO_RETURN_IF_ERROR(get_number_list(j["data"], join_path(path, "data"), &b->data));
  } else if (j.contains("data")) {
    return fail(join_path(path, "data"), "only constant buffers have data, this one is " + kind);
  }
  if (j.contains("init")) {
    if (b->storage != StorageKind::kParam && b->storage != StorageKind::kState)
      return fail(join_path(path, "init"), "only param and state buffers have an init, this one is " + kind);
    HYMO_RETURN_IF_ERROR(parse_init(j["init"], join_path(path, "init"), &b->init));
  }
  return ok_status();
}

Status parse_attr(const json& j, const std::string& path, Attr* a) {
  if (j.is_boolean()) {
    a->kind = Attr::Kind::kBool;
    a->b = j.get<bool>();
  } else if (j.is_number_integer()) {
    a->kind = Attr::Kind::kInt;
    HYMO_RETURN_IF_ERROR(get_int(j, path, &a->i));
  } else if (j.is_number_float()) {
    a->kind = Attr::Kind::kFloat;
    a->f = j.get<double>();
  } else if (j.is_string()) {
    a->kind = Attr::Kind::kString;
    a->s = j.get<std::string>();
  } else if (j.is_array()) {
    bool all_int = true;
    for (const json& e : j) {
      if (!e.is_number())
        return fail(path, "expected an array of numbers, found an element that is " + describe(e));
      all_int = all_int && e.is_number_integer();
    }
    if (all_int) {
      a->kind = Attr::Kind::kIntList;
      HYMO_RETURN_IF_ERROR(get_int_list(j, path, &a->ints));
    } else {
      a->kind = Attr::Kind::kFloatList;
      HYMO_RETURN_IF_ERROR(get_number_list(j, path, &a->floats));
    }
  } else {
    return fail(path, "expected a bool, a number, a string or an array of numbers, found " + describe(j));
  }
  return ok_status();
}

Status parse_call(const json& j, const std::string& path, Call* c) {
  HYMO_RETURN_IF_ERROR(check_keys(j, path, {"op", "operands", "results"}, {"attrs"}));
  HYMO_RETURN_IF_ERROR(get_string(j["op"], join_path(path, "op"), &c->op));
  HYMO_RETURN_IF_ERROR(get_int_list(j["operands"], join_path(path, "operands"), &c->operands));
  HYMO_RETURN_IF_ERROR(get_int_list(j["results"], join_path(path, "results"), &c->results));
  if (j.contains("attrs")) {
    const json& attrs = j["attrs"];
    std::string apath = join_path(path, "attrs");
    if (!attrs.is_object())
      return fail(apath, "expected an object, found " + describe(attrs));
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      Attr a;
      HYMO_RETURN_IF_ERROR(parse_attr(it.value(), join_path(apath, it.key()), &a));
      c->attrs[it.key()] = std::move(a);
    }
  }
  return ok_status();
}

// The parts of a plan parsed while the parser reads them (parse_plan_status):
// every element of `buffers`, `params` and each function's `calls` becomes its
// struct as soon as the parser completes it, and leaves the JSON tree, which
// then holds only the rest (tiny at 400 layers: an 86 MB plan held 696 MB as a
// tree). A part's first error is kept and returned where parse_document
// reaches that part, so that the messages and their order are the tree's.
struct Streamed {
  struct Part {
    Status error = ok_status();
    size_t count = 0;  // elements seen (the index of the next one)
  };
  Part buffers, params;
  std::vector<BufferDesc> buffer_list;
  std::vector<ParamEntry> param_list;
  struct Calls : Part {
    std::vector<Call> list;
  };
  std::map<std::string, Calls> calls;  // by function key (the last array under that key)
};

Status parse_function(const json& j, const std::string& path, Streamed::Calls* streamed, Function* f) {
  HYMO_RETURN_IF_ERROR(check_keys(j, path, {"calls"}, {"inputs", "outputs"}));
  if (j.contains("inputs"))
    HYMO_RETURN_IF_ERROR(get_int_list(j["inputs"], join_path(path, "inputs"), &f->inputs));
  if (j.contains("outputs"))
    HYMO_RETURN_IF_ERROR(get_int_list(j["outputs"], join_path(path, "outputs"), &f->outputs));
  const json& calls = j["calls"];
  std::string cpath = join_path(path, "calls");
  if (!calls.is_array()) return fail(cpath, "expected an array, found " + describe(calls));
  // Every calls array opens its part in PlanSax, and its calls leave the tree as they complete.
  if (!streamed || !calls.empty()) return fail(cpath, "internal error: the calls were not parsed as read");
  HYMO_RETURN_IF_ERROR(streamed->error);
  f->calls = std::move(streamed->list);
  return ok_status();
}

Status parse_param(const json& j, const std::string& p, ParamEntry* e) {
  HYMO_RETURN_IF_ERROR(check_keys(j, p, {"name", "buffer", "optimizer"}, {}));
  HYMO_RETURN_IF_ERROR(get_string(j["name"], p + ".name", &e->name));
  HYMO_RETURN_IF_ERROR(get_int(j["buffer"], p + ".buffer", &e->buffer));
  std::string opt;
  HYMO_RETURN_IF_ERROR(get_string(j["optimizer"], p + ".optimizer", &opt));
  if (opt == "normuon") e->optimizer = Optimizer::kNorMuon;
  else if (opt == "adamw") e->optimizer = Optimizer::kAdamW;
  else if (opt == "none") e->optimizer = Optimizer::kNone;
  else return fail(p + ".optimizer", "expected normuon, adamw or none, found \"" + opt + "\"");
  return ok_status();
}

// `streamed`: what the parser already turned into structs (buffers, params, calls);
// `doc` holds the rest.
Status parse_document(const json& doc, Streamed& streamed, Plan* plan) {
  if (!doc.is_object()) return fail("(root)", "expected an object, found " + describe(doc));
  // Format and version first: a file that is not a plan (or a newer one) is
  // named as such before any other complaint.
  if (!doc.contains("format")) return fail("format", "missing required field (expected \"hymo-plan\")");
  HYMO_RETURN_IF_ERROR(get_string(doc["format"], "format", &plan->format));
  if (plan->format != kPlanFormatName)
    return fail("format", std::string("expected \"") + kPlanFormatName + "\", found \"" + plan->format + "\"");
  if (!doc.contains("version")) return fail("version", "missing required field");
  HYMO_RETURN_IF_ERROR(get_int(doc["version"], "version", &plan->version));
  if (plan->version != kPlanFormatVersion)
    return fail("version", "expected " + std::to_string(kPlanFormatVersion) +
                               " (this runtime reads version " + std::to_string(kPlanFormatVersion) +
                               "), found " + std::to_string(plan->version));
  HYMO_RETURN_IF_ERROR(check_keys(doc, "", {"format", "version", "config", "arena_bytes", "buffers", "functions"},
                                  {"params", "collectives", "kernels", "producer"}));
  if (!doc["config"].is_object())
    return fail("config", "expected an object, found " + describe(doc["config"]));
  plan->config_json = doc["config"].dump();
  if (doc.contains("producer") && !doc["producer"].is_string())
    return fail("producer", "expected a string, found " + describe(doc["producer"]));
  HYMO_RETURN_IF_ERROR(get_int(doc["arena_bytes"], "arena_bytes", &plan->arena_bytes));

  const json& buffers = doc["buffers"];
  if (!buffers.is_array()) return fail("buffers", "expected an array, found " + describe(buffers));
  // (The tree's streamed arrays are empty: PlanSax took each element out as it completed.)
  if (!buffers.empty()) return fail("buffers", "internal error: the buffers were not parsed as read");
  HYMO_RETURN_IF_ERROR(streamed.buffers.error);
  plan->buffers = std::move(streamed.buffer_list);

  if (doc.contains("params")) {
    const json& params = doc["params"];
    if (!params.is_array()) return fail("params", "expected an array, found " + describe(params));
    if (!params.empty()) return fail("params", "internal error: the params were not parsed as read");
    HYMO_RETURN_IF_ERROR(streamed.params.error);
    plan->params = std::move(streamed.param_list);
  }

  const json& functions = doc["functions"];
  if (!functions.is_object()) return fail("functions", "expected an object, found " + describe(functions));
  for (auto it = functions.begin(); it != functions.end(); ++it) {
    Function f;
    f.name = it.key();
    Streamed::Calls* calls = nullptr;
    if (auto c = streamed.calls.find(it.key()); c != streamed.calls.end()) calls = &c->second;
    HYMO_RETURN_IF_ERROR(parse_function(it.value(), join_path("functions", it.key()), calls, &f));
    plan->functions.push_back(std::move(f));
  }

  // Reserved for later versions (docs/plan-format.md): present but empty.
  for (const char* reserved : {"collectives", "kernels"}) {
    if (!doc.contains(reserved)) continue;
    const json& r = doc[reserved];
    if (!r.is_array()) return fail(reserved, "expected an array, found " + describe(r));
    if (!r.empty())
      return fail(std::string(reserved) + "[0]",
                  "reserved for a later plan version: version 1 expects an empty array, found " +
                      std::to_string(r.size()) + " entries");
  }
  return ok_status();
}

}  // namespace

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

Status plan_error(const std::string& path, const std::string& msg) {
  return error_status("plan: " + path + ": " + msg);
}

namespace {

// Builds the plan's JSON tree from the parser's events (as nlohmann's own
// tree builder does), except that an element completing inside `buffers`,
// `params` or a function's `calls` goes to its struct at once (Streamed) and
// leaves the tree.
class PlanSax {
 public:
  explicit PlanSax(Streamed* streamed) : streamed_(streamed) {}

  json root;
  std::string error;  // the parser's message when it fails

  bool null() { return scalar(nullptr); }
  bool boolean(bool v) { return scalar(v); }
  bool number_integer(json::number_integer_t v) { return scalar(v); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(v); }
  bool number_float(json::number_float_t v, const std::string&) { return scalar(v); }
  bool string(std::string& v) { return scalar(std::move(v)); }
  bool binary(json::binary_t& v) { return scalar(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool key(std::string& k) {
    open_.back().key = k;
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    error = e.what();
    return false;
  }

 private:
  struct Open {
    json* value;
    std::string key;  // an object's member being read
  };

  // Which streamed array the innermost open container is, if any.
  enum class Part { kNone, kBuffers, kParams, kCalls };
  Part part() const {
    size_t n = open_.size();
    if (n < 2 || !open_[0].value->is_object() || !open_[n - 1].value->is_array()) return Part::kNone;
    if (n == 2 && open_[0].key == "buffers") return Part::kBuffers;
    if (n == 2 && open_[0].key == "params") return Part::kParams;
    if (n == 4 && open_[0].key == "functions" && open_[1].value->is_object() && open_[2].value->is_object() &&
        open_[2].key == "calls")
      return Part::kCalls;
    return Part::kNone;
  }

  json* place(json&& v) {
    if (open_.empty()) {
      root = std::move(v);
      return &root;
    }
    Open& parent = open_.back();
    if (parent.value->is_array()) {
      parent.value->push_back(std::move(v));
      return &parent.value->back();
    }
    json& slot = (*parent.value)[parent.key];  // (a repeated key: its last value, where the first was)
    slot = std::move(v);
    return &slot;
  }

  bool open(json&& v) {
    // (A tree nested hundreds of thousands deep overflows the stack when it is copied or freed;
    // a plan nests a few levels.)
    if (open_.size() >= kMaxDepth) {
      error = "nested deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    json* p = place(std::move(v));
    open_.push_back({p, {}});
    // A second array under one of those keys replaces the first, as in the tree.
    switch (part()) {
      case Part::kBuffers: streamed_->buffers = {}, streamed_->buffer_list.clear(); break;
      case Part::kParams: streamed_->params = {}, streamed_->param_list.clear(); break;
      case Part::kCalls:  // (the function's part and path found once an array, not once a call)
        calls_ = &(streamed_->calls[open_[1].key] = {});
        calls_path_ = join_path(join_path("functions", open_[1].key), "calls");
        break;
      case Part::kNone: break;
    }
    return true;
  }

  bool close() {
    open_.pop_back();
    completed();
    return true;
  }

  bool scalar(json&& v) {
    place(std::move(v));
    completed();
    return true;
  }

  // The value just placed is complete: an element of a streamed array is
  // parsed and taken out.
  void completed() {
    Part which = part();
    if (which == Part::kNone) return;
    json& array = *open_.back().value;
    json value = std::move(array.back());
    array.erase(array.size() - 1);
    // (After a part's first error its elements are only counted.)
    if (which == Part::kBuffers) {
      Streamed::Part& p = streamed_->buffers;
      const size_t i = p.count++;
      BufferDesc b;
      if (p.error.ok() && (p.error = parse_buffer(value, "buffers[" + std::to_string(i) + "]", &b)).ok())
        streamed_->buffer_list.push_back(std::move(b));
    } else if (which == Part::kParams) {
      Streamed::Part& p = streamed_->params;
      const size_t i = p.count++;
      ParamEntry e;
      if (p.error.ok() && (p.error = parse_param(value, "params[" + std::to_string(i) + "]", &e)).ok())
        streamed_->param_list.push_back(std::move(e));
    } else {
      Streamed::Calls& p = *calls_;
      const size_t i = p.count++;
      Call c;
      if (p.error.ok() && (p.error = parse_call(value, calls_path_ + "[" + std::to_string(i) + "]", &c)).ok())
        p.list.push_back(std::move(c));
    }
  }

  static constexpr size_t kMaxDepth = 10000;
  Streamed* streamed_;
  std::vector<Open> open_;
  Streamed::Calls* calls_ = nullptr;  // the open calls array's part, and its path
  std::string calls_path_;
};

}  // namespace

Status parse_plan_status(const std::string& json_text, Plan* out) {
  // The tree holds what the streamed parts leave: an 86 MB plan (tiny at
  // 400 layers) took 696 MB and 3.3 s to load as one tree.
  Streamed streamed;
  PlanSax sax(&streamed);
  if (!json::sax_parse(json_text, &sax)) {
    // The parser quotes the bytes it stopped at: show unprintable ones as
    // \xNN so that a binary file does not write raw bytes to a terminal.
    // (Its parse_error, or out_of_range for a number like 1e999.)
    std::string what;
    for (unsigned char ch : sax.error) {
      if (ch >= 0x20 && ch < 0x7f) {
        what += char(ch);
      } else {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02x", ch);
        what += hex;
      }
    }
    return error_status(what.empty() ? "plan: not valid JSON" : "plan: not valid JSON: " + what);
  }
  Plan plan;
  HYMO_RETURN_IF_ERROR(parse_document(sax.root, streamed, &plan));
  HYMO_RETURN_IF_ERROR(validate_plan(plan));
  *out = std::move(plan);
  return ok_status();
}

Status load_plan_status(const std::string& path, Plan* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return error_status("plan file '" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) return error_status("cannot open plan file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return error_status("cannot read plan file '" + path + "'");
  Status s = parse_plan_status(ss.str(), out);
  return s.with_context(path);
}

Plan parse_plan(const std::string& json_text) {
  Plan p;
  throw_if_error(parse_plan_status(json_text, &p));
  return p;
}

Plan load_plan(const std::string& path) {
  Plan p;
  throw_if_error(load_plan_status(path, &p));
  return p;
}

}  // namespace hymo::rt

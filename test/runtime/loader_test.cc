// The plan loader: the valid hand-written plan loads; each corrupted field
// gives an error that names it; no corruption crashes the loader.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hymo/rt/api.h"

namespace {

using json = nlohmann::ordered_json;

json load_valid() {
  std::ifstream in(std::string(HYMO_TEST_PLANS) + "/tiny_forward.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

std::string load_error(const json& doc) {
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::parse_plan_status(doc.dump(), &plan);
  return s.ok() ? std::string("(loaded fine)") : s.message();
}

TEST(Loader, ValidPlanLoads) {
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::parse_plan_status(load_valid().dump(), &plan);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(plan.buffers.size(), 25u);
  EXPECT_EQ(plan.params.size(), 9u);
  EXPECT_EQ(plan.arena_bytes, 3520);
  ASSERT_EQ(plan.functions.size(), 1u);
  EXPECT_EQ(plan.functions[0].calls.size(), 14u);
  EXPECT_NE(plan.config_json.find("\"vocab_size\":16"), std::string::npos);
  // The summary names every part.
  std::string sum = hymo::rt::plan_summary(plan);
  EXPECT_NE(sum.find("arena: 3520 bytes"), std::string::npos) << sum;
  EXPECT_NE(sum.find("layers.0.ffn.W1.weight -> %4 f32[16,8] optimizer normuon"), std::string::npos) << sum;
  EXPECT_NE(sum.find("[13] %24 loss = cross_entropy(%23 logits, %1 targets)"), std::string::npos) << sum;
}

TEST(Loader, MissingFileAndBadJson) {
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::load_plan_status("/nonexistent/plan.json", &plan);
  EXPECT_NE(s.message().find("cannot open plan file '/nonexistent/plan.json'"), std::string::npos);
  s = hymo::rt::parse_plan_status("{\"format\": \"hymo-plan\", ", &plan);
  EXPECT_NE(s.message().find("plan: not valid JSON"), std::string::npos) << s.message();
  s = hymo::rt::parse_plan_status("[1, 2]", &plan);
  EXPECT_NE(s.message().find("plan: (root): expected an object"), std::string::npos) << s.message();
  EXPECT_THROW(hymo::rt::parse_plan("[]"), hymo::rt::Error);
}

struct Corruption {
  const char* name;
  std::function<void(json&)> edit;
  const char* expected;  // a substring of the error
};

// Buffer 11 is arena "x0" f32[6,8] at 0; call 2 is linear(%12, %4) -> %13.
const Corruption kCorruptions[] = {
    {"magic", [](json& j) { j["format"] = "hymo-plon"; }, "plan: format: expected \"hymo-plan\", found \"hymo-plon\""},
    {"magic_missing", [](json& j) { j.erase("format"); }, "plan: format: missing required field"},
    {"version", [](json& j) { j["version"] = 2; }, "plan: version: expected 1 (this runtime reads version 1), found 2"},
    {"version_type", [](json& j) { j["version"] = "1"; }, "plan: version: expected an integer, found the string \"1\""},
    {"unknown_top", [](json& j) { j["colectives"] = json::array(); }, "plan: colectives: unknown field"},
    {"config_type", [](json& j) { j["config"] = 3; }, "plan: config: expected an object, found the integer 3"},
    {"arena_missing", [](json& j) { j.erase("arena_bytes"); }, "plan: arena_bytes: missing required field"},
    {"arena_negative", [](json& j) { j["arena_bytes"] = -1; }, "plan: arena_bytes: expected >= 0, found -1"},
    {"arena_too_small", [](json& j) { j["arena_bytes"] = 3456; },
     "plan: buffers[24].offset: buffer of 4 bytes at offset 3456 ends at 3460, past arena_bytes 3456"},
    {"buffers_type", [](json& j) { j["buffers"] = json::object(); }, "plan: buffers: expected an array, found an object"},
    {"buffer_id", [](json& j) { j["buffers"][2]["id"] = 7; },
     "plan: buffers[2].id: expected 2 (ids are the buffers' positions), found 7"},
    {"buffer_name_empty", [](json& j) { j["buffers"][2]["name"] = ""; }, "plan: buffers[2].name: expected a non-empty name"},
    {"buffer_name_dup", [](json& j) { j["buffers"][3]["name"] = "embed.weight"; },
     "plan: buffers[3].name: duplicate name 'embed.weight' (also buffers[2])"},
    {"dtype", [](json& j) { j["buffers"][3]["dtype"] = "f16"; },
     "plan: buffers[3].dtype: expected a dtype (f32, f64, bf16, i32), found \"f16\""},
    {"shape_zero", [](json& j) { j["buffers"][4]["shape"][1] = 0; },
     "plan: buffers[4].shape[1]: expected a positive dim, found 0"},
    {"shape_type", [](json& j) { j["buffers"][4]["shape"] = "16x8"; },
     "plan: buffers[4].shape: expected an array of integers, found the string \"16x8\""},
    {"shape_float", [](json& j) { j["buffers"][4]["shape"][0] = 1.5; },
     "plan: buffers[4].shape[0]: expected an integer, found the number 1.5"},
    {"shape_huge", [](json& j) { j["buffers"][4]["shape"] = {1 << 30, 1 << 30}; },
     "plan: buffers[4].shape: element count of [1073741824,1073741824] exceeds the limit 2^40"},
    {"storage", [](json& j) { j["buffers"][4]["storage"] = "heap"; },
     "plan: buffers[4].storage: expected a storage kind (param, state, input, arena, constant), found \"heap\""},
    {"offset_misaligned", [](json& j) { j["buffers"][12]["offset"] = 200; },
     "plan: buffers[12].offset: expected a multiple of 64 (arena alignment), found 200"},
    {"offset_negative", [](json& j) { j["buffers"][12]["offset"] = -64; },
     "plan: buffers[12].offset: expected an offset >= 0, found -64"},
    {"offset_missing", [](json& j) { j["buffers"][12].erase("offset"); },
     "plan: buffers[12].offset: missing required field (arena buffers have a byte offset)"},
    {"offset_on_param", [](json& j) { j["buffers"][4]["offset"] = 0; },
     "plan: buffers[4].offset: only arena buffers have an offset, this one is param"},
    {"unknown_buffer_field", [](json& j) { j["buffers"][4]["stride"] = 1; }, "plan: buffers[4].stride: unknown field"},
    {"init_bad", [](json& j) { j["buffers"][4]["init"] = {{"gauss", 1}}; }, "plan: buffers[4].init: expected one of"},
    {"init_uniform_range", [](json& j) { j["buffers"][4]["init"]["uniform"] = {1.0}; },
     "plan: buffers[4].init.uniform: expected [low, high], found 1 numbers"},
    {"init_normal_count", [](json& j) { j["buffers"][4]["init"] = {{"normal", {1.0}}, {"seed", 1}}; },
     "plan: buffers[4].init.normal: expected [mean, std], found 1 numbers"},
    {"init_normal_type", [](json& j) { j["buffers"][4]["init"] = {{"normal", 0.5}, {"seed", 1}}; },
     "plan: buffers[4].init.normal: expected an array of numbers, found the number 0.5"},
    {"init_normal_std_negative", [](json& j) { j["buffers"][4]["init"] = {{"normal", {0.0, -1.0}}, {"seed", 1}}; },
     "plan: buffers[4].init.normal: expected a finite mean and a finite std >= 0, found [0.000000, -1.000000]"},
    {"init_normal_seed_missing", [](json& j) { j["buffers"][4]["init"] = {{"normal", {0.0, 1.0}}}; },
     "plan: buffers[4].init.seed: missing required field"},
    {"init_normal_seed_negative", [](json& j) { j["buffers"][4]["init"] = {{"normal", {0.0, 1.0}}, {"seed", -3}}; },
     "plan: buffers[4].init.seed: expected a seed >= 0, found -3"},
    {"init_normal_unknown_key", [](json& j) {
       j["buffers"][4]["init"] = {{"normal", {0.0, 1.0}}, {"seed", 1}, {"low", 0}};
     },
     "plan: buffers[4].init.low: unknown field (expected one of: normal, seed)"},
    {"init_normal_int_buffer", [](json& j) {
       j["buffers"][4]["dtype"] = "i32";
       j["buffers"][4]["init"] = {{"normal", {0.0, 1.0}}, {"seed", 1}};
     },
     "plan: buffers[4].init.normal: expected a float buffer, found i32[16,8]"},
    {"init_data_count", [](json& j) { j["buffers"][3]["init"] = {{"data", {1, 2, 3}}}; },
     "plan: buffers[3].init.data: expected 8 values for f32[8], found 3"},
    {"init_on_arena", [](json& j) { j["buffers"][12]["init"] = {{"fill", 1}}; },
     "plan: buffers[12].init: only param and state buffers have an init, this one is arena"},
    {"constant_without_data", [](json& j) { j["buffers"][3]["storage"] = "constant"; j["buffers"][3].erase("init"); },
     "plan: buffers[3].data: missing required field (constant buffers carry their data)"},
    {"constant_data_count", [](json& j) {
       j["buffers"][3]["storage"] = "constant";
       j["buffers"][3].erase("init");
       j["buffers"][3]["data"] = {1, 2};
     },
     "plan: buffers[3].data: expected 8 values for f32[8] (or 1, a splat), found 2"},
    {"i32_data_not_integer", [](json& j) {
       j["buffers"][0]["storage"] = "constant";
       j["buffers"][0]["data"] = {1, 2, 3, 4, 5, 6.5};
       j["functions"]["forward"]["inputs"] = {1};
     },
     "plan: buffers[0].data[5]: expected an i32 value, found 6.5"},
    {"param_missing_from_table", [](json& j) { j["params"].erase(1); },
     "plan: buffers[3].storage: param buffer 3 'layers.0.norm1.weight' has no entry in params"},
    {"params_buffer_range", [](json& j) { j["params"][0]["buffer"] = 99; },
     "plan: params[0].buffer: buffer 99 out of range (have 25)"},
    {"params_buffer_kind", [](json& j) { j["params"][0]["buffer"] = 11; },
     "plan: params[0].buffer: buffer 11 'x0' has storage arena, expected param or state"},
    {"params_optimizer", [](json& j) { j["params"][0]["optimizer"] = "sgd"; },
     "plan: params[0].optimizer: expected normuon, adamw or none, found \"sgd\""},
    {"params_normuon_1d", [](json& j) { j["params"][1]["optimizer"] = "normuon"; },
     "plan: params[1].optimizer: normuon needs a 2-D weight, buffer 3 'layers.0.norm1.weight' is f32[8]"},
    {"params_dup_name", [](json& j) { j["params"][1]["name"] = "embed.weight"; },
     "plan: params[1].name: duplicate parameter name 'embed.weight' (also params[0])"},
    {"params_dup_buffer", [](json& j) { j["params"][1]["buffer"] = 2; },
     "plan: params[1].buffer: buffer 2 'embed.weight' is already params[0]"},
    {"params_missing_field", [](json& j) { j["params"][1].erase("optimizer"); },
     "plan: params[1].optimizer: missing required field"},
    {"functions_type", [](json& j) { j["functions"] = json::array(); },
     "plan: functions: expected an object, found an array"},
    {"function_inputs_kind", [](json& j) { j["functions"]["forward"]["inputs"] = {0, 2}; },
     "plan: functions.forward.inputs[1]: buffer 2 'embed.weight' has storage param, expected input"},
    {"function_outputs_range", [](json& j) { j["functions"]["forward"]["outputs"] = {25}; },
     "plan: functions.forward.outputs[0]: buffer 25 out of range (have 25)"},
    {"calls_missing", [](json& j) { j["functions"]["forward"].erase("calls"); },
     "plan: functions.forward.calls: missing required field"},
    {"operand_range", [](json& j) { j["functions"]["forward"]["calls"][3]["operands"][0] = 99; },
     "plan: functions.forward.calls[3].operands[0]: buffer 99 out of range (have 25)"},
    {"operand_negative", [](json& j) { j["functions"]["forward"]["calls"][2]["operands"][1] = -1; },
     "plan: functions.forward.calls[2].operands[1]: buffer -1 out of range (have 25)"},
    {"result_range", [](json& j) { j["functions"]["forward"]["calls"][2]["results"][0] = 1000; },
     "plan: functions.forward.calls[2].results[0]: buffer 1000 out of range (have 25)"},
    {"op_unknown", [](json& j) { j["functions"]["forward"]["calls"][1]["op"] = "rmsnorm"; },
     "plan: functions.forward.calls[1].op: unknown op \"rmsnorm\""},
    {"op_prefixed", [](json& j) { j["functions"]["forward"]["calls"][1]["op"] = "hymo.rms_norm"; },
     "plan: functions.forward.calls[1].op: unknown op \"hymo.rms_norm\""},
    {"operand_count", [](json& j) { j["functions"]["forward"]["calls"][2]["operands"] = {12}; },
     "plan: functions.forward.calls[2].operands: op linear expects 2 operands, found 1"},
    {"result_count", [](json& j) { j["functions"]["forward"]["calls"][2]["results"] = {13, 14}; },
     "plan: functions.forward.calls[2].results: op linear expects 1 results, found 2"},
    {"operand_dtype", [](json& j) { j["buffers"][4]["dtype"] = "f64"; },
     "plan: functions.forward.calls[2].operands[1]: expected dtype f32 (as operand 0), found f64[16,8]"},
    {"operand_int_for_float", [](json& j) { j["functions"]["forward"]["calls"][3]["operands"][0] = 0; },
     "plan: functions.forward.calls[3].operands[0]: op silu expects a float operand (f32, f64, bf16), found i32[6]"},
    {"operand_float_for_int", [](json& j) { j["functions"]["forward"]["calls"][13]["operands"][1] = 24; },
     "plan: functions.forward.calls[13].operands[1]: op cross_entropy expects an i32 operand, found f32[]"},
    {"operand_shape", [](json& j) { j["buffers"][4]["shape"] = {16, 7}; j["buffers"][4]["init"] = {{"fill", 0.5}}; },
     "plan: functions.forward.calls[2].operands[1]: expected weight [N,8] (K of x), found [16,7]"},
    {"result_shape", [](json& j) { j["buffers"][13]["shape"] = {6, 15}; },
     "plan: functions.forward.calls[2].results[0]: expected f32[6,16], found f32[6,15]"},
    {"attr_missing", [](json& j) { j["functions"]["forward"]["calls"][1].erase("attrs"); },
     "plan: functions.forward.calls[1].attrs.eps: missing required attribute (a number) of op rms_norm"},
    {"attr_type", [](json& j) { j["functions"]["forward"]["calls"][1]["attrs"]["eps"] = true; },
     "plan: functions.forward.calls[1].attrs.eps: expected a number, found true"},
    {"attr_string", [](json& j) { j["functions"]["forward"]["calls"][1]["attrs"]["eps"] = "1e-6"; },
     "plan: functions.forward.calls[1].attrs.eps: expected a number, found the string \"1e-6\""},
    {"attr_value", [](json& j) { j["functions"]["forward"]["calls"][1]["attrs"]["eps"] = -1; },
     "plan: functions.forward.calls[1].attrs.eps: expected eps >= 0, found -1"},
    {"attr_unknown", [](json& j) { j["functions"]["forward"]["calls"][2]["attrs"] = {{"transpose_b", true}}; },
     "plan: functions.forward.calls[2].attrs.transpose_b: unknown attribute for op linear (it takes none)"},
    {"attrs_type", [](json& j) { j["functions"]["forward"]["calls"][2]["attrs"] = {1, 2}; },
     "plan: functions.forward.calls[2].attrs: expected an object, found an array"},
    {"unknown_call_field", [](json& j) { j["functions"]["forward"]["calls"][2]["grid"] = 1; },
     "plan: functions.forward.calls[2].grid: unknown field"},
    {"write_to_input", [](json& j) { j["functions"]["forward"]["calls"][3]["results"][0] = 0; },
     "plan: functions.forward.calls[3].results[0]: buffer 0 'tokens' is input storage, read-only"},
    {"arena_overlap", [](json& j) { j["buffers"][13]["offset"] = 256; },
     "plan: functions.forward.calls[2].results[0]: buffer 13 'l0.h' overlaps operands[0] buffer 12 'l0.u' (op linear cannot run in place)"},
    {"partial_inplace", [](json& j) { j["buffers"][14]["offset"] = 448; },
     "plan: functions.forward.calls[3].results[0]: buffer 14 'l0.act' overlaps operands[0] buffer 13 'l0.h' partially"},
    {"collectives_reserved", [](json& j) { j["collectives"] = {{{"kind", "all_reduce"}}}; },
     "plan: collectives[0]: reserved for a later plan version: version 1 expects an empty array, found 1 entries"},
    {"kernels_reserved", [](json& j) { j["kernels"] = {{{"name", "k"}, {"ptx", "..."}}}; },
     "plan: kernels[0]: reserved for a later plan version"},
    {"producer_type", [](json& j) { j["producer"] = 1; }, "plan: producer: expected a string, found the integer 1"},
};

class LoaderCorruption : public ::testing::TestWithParam<Corruption> {};

TEST_P(LoaderCorruption, ErrorNamesTheField) {
  json doc = load_valid();
  GetParam().edit(doc);
  std::string err = load_error(doc);
  EXPECT_NE(err.find(GetParam().expected), std::string::npos) << "got: " << err << "\nexpected: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(Fields, LoaderCorruption, ::testing::ValuesIn(kCorruptions),
                         [](const auto& info) { return std::string(info.param.name); });

// Each size of a call's matrix products (M, N, K, the row strides) goes to
// CBLAS as int (cpu/gemm.cc): past 2^31 - 1 it would be truncated, so the
// plan check refuses it, naming the call, the size and the operand giving it.
// One call on input/constant operands and state results (no arena).
json gemm_plan(const std::vector<std::vector<int64_t>>& in, const std::vector<std::vector<int64_t>>& out,
               const std::string& op, const json& attrs = json::object()) {
  json doc = {{"format", "hymo-plan"}, {"version", 1}, {"config", json::object()}, {"arena_bytes", 0}};
  json buffers = json::array(), call = {{"op", op}, {"operands", json::array()}, {"results", json::array()}};
  json inputs = json::array();
  for (const auto& shape : in) {
    call["operands"].push_back(buffers.size());
    inputs.push_back(buffers.size());
    buffers.push_back({{"id", buffers.size()}, {"name", "in" + std::to_string(buffers.size())}, {"dtype", "f32"},
                       {"shape", shape}, {"storage", "input"}});
  }
  for (const auto& shape : out) {
    call["results"].push_back(buffers.size());
    buffers.push_back({{"id", buffers.size()}, {"name", "out" + std::to_string(buffers.size())}, {"dtype", "f32"},
                       {"shape", shape}, {"storage", "state"}});
  }
  if (!attrs.empty()) call["attrs"] = attrs;
  doc["buffers"] = buffers;
  doc["functions"] = {{"forward", {{"inputs", inputs}, {"outputs", json::array()}, {"calls", {call}}}}};
  return doc;
}

TEST(Loader, GemmSizesPastIntAreRefused) {
  const int64_t big = int64_t(1) << 31, max = big - 1;
  const std::string limit = "GEMM sizes of at most 2^31 - 1 = 2147483647 (CBLAS takes int), found ";
  // linear: the rows are the product of x's leading dims (each far below).
  EXPECT_EQ(load_error(gemm_plan({{2048, 1048576, 1}, {1, 1}}, {{2048, 1048576, 1}}, "linear")),
            "plan: functions.forward.calls[0].operands[0]: op linear expects " + limit +
                "M (the rows of x) = 2147483648 of f32[2048,1048576,1]");
  EXPECT_EQ(load_error(gemm_plan({{max, 1}, {1, 1}}, {{max, 1}}, "linear")), "(loaded fine)");
  EXPECT_EQ(load_error(gemm_plan({{1, 1}, {big, 1}}, {{1, big}}, "linear")),
            "plan: functions.forward.calls[0].operands[1]: op linear expects " + limit +
                "N (the rows of the weight) = 2147483648 of f32[2147483648,1]");
  EXPECT_EQ(load_error(gemm_plan({{1, big}, {big, 1}}, {{1, 1}}, "matmul")),
            "plan: functions.forward.calls[0].operands[0]: op matmul expects " + limit + "K = 2147483648 of f32[1,2147483648]");
  EXPECT_EQ(load_error(gemm_plan({{1, big, 1}, {1, 1, 1}}, {{1, big, 1}}, "grouped_linear")),
            "plan: functions.forward.calls[0].operands[0]: op grouped_linear expects " + limit +
                "M (the capacity, dim 1 of x) = 2147483648 of f32[1,2147483648,1]");
  // causal_attention: rows of one head strided by H*Dk.
  const int64_t half = big / 2;
  EXPECT_EQ(load_error(gemm_plan({{1, 1, 2, half}, {1, 1, 2, half}, {1, 1, 2, 1}}, {{1, 1, 2, 1}},
                                 "causal_attention", {{"scale", 1.0}})),
            "plan: functions.forward.calls[0].operands[0]: op causal_attention expects " + limit +
                "the row stride H*Dk of q = 2147483648 of f32[1,1,2,1073741824]");
  const std::vector<int64_t> t = {1, big, 1, 1};
  EXPECT_EQ(load_error(gemm_plan({t, t, t, t}, {t, t, t}, "causal_attention_grad", {{"scale", 1.0}})),
            "plan: functions.forward.calls[0].operands[0]: op causal_attention_grad expects " + limit +
                "T (dim 1 of q) = 2147483648 of f32[1,2147483648,1,1]");
  // The hand-edited plan file hymo-run inspect refuses (test/runtime/CMakeLists.txt).
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::load_plan_status(std::string(HYMO_TEST_PLANS) + "/gemm_past_int.json", &plan);
  EXPECT_NE(s.message().find("calls[0].operands[0]: op linear expects " + limit + "M (the rows of x) = 2147483648"),
            std::string::npos)
      << s.message();
}

TEST(Loader, NormalInitLoadsAndIsSummarized) {
  json doc = load_valid();
  doc["buffers"][4]["init"] = {{"normal", {0.0, 0.02}}, {"seed", 5}};
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::parse_plan_status(doc.dump(), &plan);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(plan.buffers[4].init.kind, hymo::rt::BufferInit::Kind::kNormal);
  EXPECT_EQ(plan.buffers[4].init.mean, 0.0);
  EXPECT_EQ(plan.buffers[4].init.stddev, 0.02);
  EXPECT_EQ(plan.buffers[4].init.seed, 5u);
  std::string sum = hymo::rt::plan_summary(plan);
  EXPECT_NE(sum.find("init normal[0,0.02] seed 5"), std::string::npos) << sum;
  // std = 0 is allowed (a fill with mean).
  doc["buffers"][4]["init"] = {{"normal", {0.25, 0}}, {"seed", 0}};
  EXPECT_EQ(load_error(doc), "(loaded fine)");
}

// In-place calls the compiler emits: a select or a binary op writing its
// result into one of its operands (donated state), and a reshape between two
// buffers of identical shape (a copy back into a state buffer).
TEST(Loader, InPlaceSelectBinaryAndSameShapeReshapeAreAccepted) {
  json doc = load_valid();
  // %5 (layers.0.ffn.W2.weight) is param f32[8,16]; %13 l0.h is arena f32[6,16].
  json& calls = doc["functions"]["forward"]["calls"];
  calls.push_back({{"op", "select"}, {"operands", {13, 13, 13}}, {"results", {13}}});
  calls.push_back({{"op", "mul"}, {"operands", {5, 5}}, {"results", {5}}});
  calls.push_back({{"op", "sub"}, {"operands", {4, 4}}, {"results", {4}}});
  calls.push_back({{"op", "reshape"}, {"operands", {13}}, {"results", {13}}});
  doc["buffers"].push_back(
      {{"id", 25}, {"name", "l0.u.saved"}, {"dtype", "f32"}, {"shape", {6, 8}}, {"storage", "state"}});
  calls.push_back({{"op", "reshape"}, {"operands", {12}}, {"results", {25}}});
  EXPECT_EQ(load_error(doc), "(loaded fine)");
  // Not for a non-elementwise op.
  calls.push_back({{"op", "transpose"}, {"operands", {13}}, {"results", {13}}, {"attrs", {{"permutation", {0, 1}}}}});
  EXPECT_NE(load_error(doc).find("overlaps operands[0] buffer 13 'l0.h' (op transpose cannot run in place)"),
            std::string::npos)
      << load_error(doc);
}

// An in-place elementwise update (result == operand) is accepted.
TEST(Loader, IdenticalInPlaceElementwiseIsAccepted) {
  json doc = load_valid();
  doc["functions"]["forward"]["calls"][3]["results"][0] = 13;  // silu(%13) -> %13
  doc["functions"]["forward"]["calls"][4]["operands"][0] = 13;
  EXPECT_EQ(load_error(doc), "(loaded fine)");
}

// Walks every leaf of the valid plan, replaces it with hostile values and
// checks that the loader answers (ok or a "plan: ..." error), never crashes.
void visit_leaves(json& node, const std::function<void(json&)>& fn) {
  if (node.is_object() || node.is_array()) {
    for (auto& child : node) visit_leaves(child, fn);
  } else {
    fn(node);
  }
}

TEST(Loader, HostileValuesNeverCrash) {
  const json base = load_valid();
  json counter = base;
  int leaves = 0;
  visit_leaves(counter, [&](json&) { ++leaves; });
  const json hostile[] = {json(nullptr), json(-1), json(int64_t(1) << 62), json(1e300), json("x"),
                          json::array(), json::object(), json(true), json(std::numeric_limits<uint64_t>::max())};
  int errors = 0, runs = 0;
  for (int target = 0; target < leaves; ++target) {
    for (const json& h : hostile) {
      json doc = base;
      int i = 0;
      visit_leaves(doc, [&](json& leaf) {
        if (i++ == target) leaf = h;
      });
      hymo::rt::Plan plan;
      hymo::rt::Status s = hymo::rt::parse_plan_status(doc.dump(), &plan);
      ++runs;
      if (!s.ok()) {
        ++errors;
        EXPECT_EQ(s.message().rfind("plan: ", 0), 0u) << s.message();
      }
    }
  }
  EXPECT_GT(errors, runs / 2);
}

// Buffers, params and calls are parsed as the parser reads them (no JSON tree
// of them): the tree's rules still hold. A key given twice keeps its last
// value, and with several errors the one reported is the one the document's
// checks meet first (format, then buffers, params, functions), wherever each
// sits in the text.
TEST(Loader, StreamedPartsKeepTheTreesRules) {
  const json base = load_valid();
  const std::string text = base.dump();
  auto with = [&](const std::string& before_key, const std::string& insert) {
    size_t at = text.find("\"" + before_key + "\":");
    EXPECT_NE(at, std::string::npos) << before_key;
    return text.substr(0, at) + insert + text.substr(at);
  };
  hymo::rt::Plan plan;
  // An earlier "buffers", "params" or function (bad ones) replaced by the later, good one.
  for (const std::string& doc : {with("buffers", "\"buffers\": [1, {\"id\": \"x\"}],"),
                                 with("params", "\"params\": [7],"),
                                 with("functions", "\"functions\": 3,")}) {
    hymo::rt::Status s = hymo::rt::parse_plan_status(doc, &plan);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(plan.buffers.size(), 25u);
    EXPECT_EQ(plan.params.size(), 9u);
    ASSERT_EQ(plan.functions.size(), 1u);
    EXPECT_EQ(plan.functions[0].calls.size(), 14u);
  }
  {
    std::string fn = "\"forward\": {\"calls\": [5]},";  // a first "forward", replaced
    size_t at = text.find("\"forward\":");
    hymo::rt::Status s = hymo::rt::parse_plan_status(text.substr(0, at) + fn + text.substr(at), &plan);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(plan.functions[0].calls.size(), 14u);
    // ... and the other way round: the later, bad one is the plan's.
    json doc = base;
    doc["functions"]["forward"]["calls"][3] = json::array({1});
    EXPECT_EQ(load_error(doc), "plan: functions.forward.calls[3]: expected an object, found an array");
  }
  // Several errors: the checks' order, not the text's.
  json doc = base;
  doc["functions"]["forward"]["calls"][2]["op"] = 1;
  doc["params"][4]["optimizer"] = "sgd";
  doc["buffers"][6]["dtype"] = "f16";
  json reordered = json::object();
  for (const char* k : {"functions", "params", "buffers"}) reordered[k] = doc[k];
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (!reordered.contains(it.key())) reordered[it.key()] = it.value();
  EXPECT_EQ(load_error(reordered), "plan: buffers[6].dtype: expected a dtype (f32, f64, bf16, i32), found \"f16\"");
  reordered["buffers"] = base["buffers"];
  EXPECT_EQ(load_error(reordered), "plan: params[4].optimizer: expected normuon, adamw or none, found \"sgd\"");
  reordered["params"] = base["params"];
  EXPECT_EQ(load_error(reordered), "plan: functions.forward.calls[2].op: expected a string, found the integer 1");
  reordered["format"] = "other";
  EXPECT_EQ(load_error(reordered), "plan: format: expected \"hymo-plan\", found \"other\"");
}

// A document nested far deeper than any plan is refused, not a crash (a tree that deep
// overflowed the stack when it was copied or freed; 200,000 levels crashed the loader).
TEST(Loader, DeepNestingIsRefused) {
  std::string text = "{\"format\": \"hymo-plan\", \"version\": 1, \"config\": ";
  const int depth = 200000;
  text += std::string(depth, '[') + std::string(depth, ']') + "}";
  hymo::rt::Plan plan;
  hymo::rt::Status s = hymo::rt::parse_plan_status(text, &plan);
  EXPECT_EQ(s.message(), "plan: not valid JSON: nested deeper than 10000 levels");
  // 50 levels inside the config: loads as the tree allows (the config is free-form).
  json doc = load_valid();
  std::string t = doc.dump();
  size_t at = t.find("\"config\":{") + std::string("\"config\":{").size();
  t.insert(at, "\"deep\":" + std::string(50, '[') + std::string(50, ']') + ",");
  s = hymo::rt::parse_plan_status(t, &plan);
  EXPECT_TRUE(s.ok()) << s.message();
}

}  // namespace

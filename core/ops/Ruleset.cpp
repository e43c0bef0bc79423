#include "ops/Ruleset.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace jointscope {
namespace detail {
extern const BuiltinRuleset kBuiltinRulesets[];
extern const size_t kBuiltinRulesetCount;
} // namespace detail

std::string opKey(const Target& target) {
    switch (target.kind) {
    case TargetKind::OpOverload:
    case TargetKind::OpPacket:
    case TargetKind::HigherOrder:
    case TargetKind::Operator:
        return target.ns + "." + target.op;
    case TargetKind::Python:
    case TargetKind::Name:
        break;
    }
    return target.ns.empty() ? target.text : target.ns + "." + target.op;
}

namespace {

// "torch-2.15" -> {2, 15}; {-1, -1} for other names.
std::pair<int, int> rulesetVersion(std::string_view name) {
    int major = -1, minor = -1;
    if (name.starts_with("torch-") &&
        std::sscanf(std::string(name.substr(6)).c_str(), "%d.%d", &major, &minor) == 2)
        return {major, minor};
    return {-1, -1};
}

} // namespace

std::vector<BuiltinRuleset> builtinRulesets() {
    std::vector<BuiltinRuleset> all(detail::kBuiltinRulesets,
                                    detail::kBuiltinRulesets + detail::kBuiltinRulesetCount);
    std::sort(all.begin(), all.end(), [](const BuiltinRuleset& a, const BuiltinRuleset& b) {
        return rulesetVersion(a.name) < rulesetVersion(b.name);
    });
    return all;
}

std::vector<std::string_view> builtinRulesetNames() {
    std::vector<std::string_view> names;
    for (const BuiltinRuleset& r : builtinRulesets())
        names.push_back(r.name);
    return names;
}

namespace {

using Json = nlohmann::json;

Diagnostic rulesetError(std::string_view fileName, std::string message) {
    return makeError({std::string(fileName), 1, 1}, std::move(message));
}

void readOpSet(const Json& ops, const char* key, OpSet& into) {
    if (!ops.contains(key))
        return;
    for (const Json& op : ops.at(key))
        into.insert(op.get<std::string>());
}

template <typename T> void readSwitch(const Json& switches, const char* key, T& into) {
    if (switches.contains(key))
        into = switches.at(key).get<T>();
}

} // namespace

Expected<Ruleset> parseRuleset(std::string_view jsonText, std::string_view fileName) {
    Json doc = Json::parse(jsonText, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object())
        return rulesetError(fileName, "not a JSON ruleset object");
    if (doc.value("format", "") != "jointscope-ruleset")
        return rulesetError(fileName, "missing \"format\": \"jointscope-ruleset\"");
    Ruleset rules;
    try {
        rules.name = doc.value("name", std::string(fileName));
        rules.description = doc.value("description", "");
        const Json empty = Json::object();
        const Json& switches = doc.contains("switches") ? doc.at("switches") : empty;
        const std::string sizeModel = switches.value("size_model", "val");
        if (sizeModel == "tensor_meta")
            rules.sizeModel = SizeModel::TensorMeta;
        else if (sizeModel == "val")
            rules.sizeModel = SizeModel::Val;
        else
            return rulesetError(fileName, "unknown size_model '" + sizeModel + "' (tensor_meta or val)");
        readSwitch(switches, "cse", rules.cse);
        readSwitch(switches, "ban_if_not_in_allowlist", rules.banIfNotInAllowlist);
        readSwitch(switches, "ban_if_reduction", rules.banIfReduction);
        readSwitch(switches, "ban_if_materialized_backward", rules.banIfMaterializedBackward);
        readSwitch(switches, "ban_if_used_far_apart", rules.banIfUsedFarApart);
        readSwitch(switches, "ban_if_long_fusible_chains", rules.banIfLongFusibleChains);
        readSwitch(switches, "max_dist_from_bw", rules.maxDistFromBw);
        readSwitch(switches, "recompute_views", rules.recomputeViews);
        readSwitch(switches, "treat_parameters_as_free_to_save", rules.treatParametersAsFreeToSave);
        readSwitch(switches, "honor_recompute_tags", rules.honorRecomputeTags);
        readSwitch(switches, "force_save_collectives", rules.forceSaveCollectives);
        readSwitch(switches, "output_dist_is_infinite", rules.outputDistIsInfinite);
        readSwitch(switches, "primal_source_by_target_name", rules.primalSourceByTargetName);
        readSwitch(switches, "dce_keeps_mutating_ops", rules.dceKeepsMutatingOps);
        readSwitch(switches, "memory_budget", rules.memoryBudget);
        readSwitch(switches, "bwd_outputs_required_in_backward", rules.bwdOutputsRequiredInBackward);
        readSwitch(switches, "epilogue_mutated_inputs_unsaveable", rules.epilogueMutatedInputsUnsaveable);
        readSwitch(switches, "tensorify_python_scalars", rules.tensorifyPythonScalars);
        readSwitch(switches, "tensorify_upcasts_float_items", rules.tensorifyUpcastsFloatItems);
        readSwitch(switches, "fused_seeds_keep_meta", rules.fusedSeedsKeepMeta);
        readSwitch(switches, "binds_specialized_symbols", rules.bindsSpecializedSymbols);
        readSwitch(switches, "mutations_stay_in_forward", rules.mutationsStayInForward);
        readSwitch(switches, "backward_mimics_autograd", rules.backwardMimicsAutograd);
        readSwitch(switches, "empty_knapsack_saves_inputs", rules.emptyKnapsackSavesInputs);
        readSwitch(switches, "lift_fresh_recomputable", rules.liftFreshRecomputable);
        readSwitch(switches, "cat_fuses_producers", rules.catFusesProducers);
        readSwitch(switches, "cse_keeps_backward_dependencies_apart",
                   rules.cseKeepsBackwardDependenciesApart);
        readSwitch(switches, "cse_skips_output_aliases", rules.cseSkipsOutputAliases);
        readSwitch(switches, "cse_keys_floats_by_bits", rules.cseKeysFloatsByBits);
        readSwitch(switches, "cse_hash_keys_types", rules.cseHashKeysTypes);
        readSwitch(switches, "pointless_convert_keeps_narrowing", rules.pointlessConvertKeepsNarrowing);
        readSwitch(switches, "remove_no_ops_takes_literals", rules.removeNoOpsTakesLiterals);
        readSwitch(switches, "scaled_softmax_keeps_nonfinite", rules.scaledSoftmaxKeepsNonfinite);
        readSwitch(switches, "scatter_upon_const_tensor", rules.scatterUponConstTensor);
        readSwitch(switches, "scatter_upon_const_tensor_keeps_dtype", rules.scatterUponConstTensorKeepsDtype);
        readSwitch(switches, "randperm_index_add_pattern", rules.randpermIndexAdd);
        readSwitch(switches, "randperm_index_add_full_pattern", rules.randpermIndexAddFull);
        readSwitch(switches, "randperm_index_full_pattern", rules.randpermIndexFull);
        readSwitch(switches, "randperm_index_slice_pattern", rules.randpermIndexSlice);
        readSwitch(switches, "tangents_closure", rules.tangentsClosure);
        readSwitch(switches, "default_partition_by_placement", rules.defaultPartitionByPlacement);
        readSwitch(switches, "backward_mimics_autograd_order", rules.backwardMimicsAutogradOrder);
        rules.torchVersion = doc.value("torch_version", "");

        const Json& ops = doc.contains("ops") ? doc.at("ops") : empty;
        readOpSet(ops, "recomputable", rules.recomputable);
        readOpSet(ops, "view", rules.views);
        readOpSet(ops, "random", rules.random);
        readOpSet(ops, "compute_intensive", rules.computeIntensive);
        readOpSet(ops, "cse_excluded", rules.cseExcluded);
        readOpSet(ops, "aliasing", rules.aliasing);
        readOpSet(ops, "rng", rules.rng);
        if (doc.contains("rng_dropout_p"))
            for (const auto& [op, arg] : doc.at("rng_dropout_p").items())
                rules.rngDropoutArg[op] = {arg.at("index").get<int>(), arg.at("default").is_number()
                                                                           ? arg.at("default").get<double>()
                                                                           : -1.0};
        if (doc.contains("graphsafe_rng_devices"))
            rules.graphsafeRngDevices = doc.at("graphsafe_rng_devices").get<std::vector<std::string>>();
        if (doc.contains("tensorify_ops"))
            for (const auto& [op, tensorOp] : doc.at("tensorify_ops").items())
                rules.tensorifyOps.emplace("torch.ops." + op, "torch.ops." + tensorOp.get<std::string>());
        readOpSet(ops, "recomputable", rules.fusible);
        readOpSet(ops, "random", rules.fusible);

        const Json& dtypeBytes = doc.contains("dtype_bytes") ? doc.at("dtype_bytes") : empty;
        for (const auto& [dtypeName, bytes] : dtypeBytes.items()) {
            const std::optional<DType> dtype = parseDType(dtypeName);
            if (!dtype)
                return rulesetError(fileName, "unknown dtype '" + dtypeName + "' in dtype_bytes");
            rules.dtypeBytes[size_t(*dtype)] = bytes.get<uint8_t>();
        }
    } catch (const Json::exception& e) {
        return rulesetError(fileName, std::string("malformed ruleset: ") + e.what());
    }
    return rules;
}

Expected<Ruleset> loadRuleset(std::string_view nameOrPath) {
    const std::vector<BuiltinRuleset> builtins = builtinRulesets();
    for (const BuiltinRuleset& r : builtins)
        if (r.name == nameOrPath)
            return parseRuleset(r.json, std::string(r.name) + ".json");
    // "torch-2", "torch-1": the newest built-in ruleset of that major version.
    int major = -1;
    if (nameOrPath.starts_with("torch-") && nameOrPath.find('.') == std::string_view::npos &&
        std::sscanf(std::string(nameOrPath.substr(6)).c_str(), "%d", &major) == 1)
        for (auto it = builtins.rbegin(); it != builtins.rend(); ++it)
            if (rulesetVersion(it->name).first == major)
                return parseRuleset(it->json, std::string(it->name) + ".json");
    std::ifstream in{std::string(nameOrPath)};
    if (!in) {
        std::string names;
        for (const BuiltinRuleset& r : builtins)
            names += std::string(names.empty() ? "" : ", ") + std::string(r.name);
        return rulesetError(nameOrPath, "no such ruleset: '" + std::string(nameOrPath) +
                                            "' is neither a built-in ruleset (" + names +
                                            ", auto) nor a readable ruleset file");
    }
    std::stringstream text;
    text << in.rdbuf();
    return parseRuleset(text.str(), nameOrPath);
}

} // namespace jointscope

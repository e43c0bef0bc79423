#include "ops/Ruleset.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace jointscope {
namespace detail {
extern const std::string_view kRulesetTorch2;
extern const std::string_view kRulesetTorch113;
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

std::vector<std::string_view> builtinRulesetNames() {
    return {"torch-2", "torch-1.13"};
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
        readSwitch(switches, "lift_fresh_recomputable", rules.liftFreshRecomputable);
        readSwitch(switches, "cat_fuses_producers", rules.catFusesProducers);

        const Json& ops = doc.contains("ops") ? doc.at("ops") : empty;
        readOpSet(ops, "recomputable", rules.recomputable);
        readOpSet(ops, "view", rules.views);
        readOpSet(ops, "random", rules.random);
        readOpSet(ops, "compute_intensive", rules.computeIntensive);
        readOpSet(ops, "cse_excluded", rules.cseExcluded);
        readOpSet(ops, "aliasing", rules.aliasing);
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
    if (nameOrPath == "torch-2" || nameOrPath == "torch2")
        return parseRuleset(detail::kRulesetTorch2, "torch-2.json");
    if (nameOrPath == "torch-1.13" || nameOrPath == "torch-113")
        return parseRuleset(detail::kRulesetTorch113, "torch-1.13.json");
    std::ifstream in{std::string(nameOrPath)};
    if (!in)
        return rulesetError(nameOrPath, "no such ruleset: '" + std::string(nameOrPath) +
                                            "' is neither torch-2, torch-1.13 nor a readable ruleset file");
    std::stringstream text;
    text << in.rdbuf();
    return parseRuleset(text.str(), nameOrPath);
}

} // namespace jointscope

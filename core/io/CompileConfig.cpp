#include "io/CompileConfig.h"

#include "io/LogSupport.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace jointscope {
namespace {

using Json = nlohmann::json;

template <typename T> void take(const Json& object, const char* key, std::optional<T>& into) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null())
        return;
    if constexpr (std::is_same_v<T, bool>) {
        if (it->is_boolean())
            into = it->get<bool>();
    } else if constexpr (std::is_same_v<T, double>) {
        if (it->is_number())
            into = it->get<double>();
    } else if constexpr (std::is_same_v<T, int64_t>) {
        if (it->is_number_integer())
            into = it->get<int64_t>();
    } else {
        if (it->is_string())
            into = it->get<std::string>();
    }
}

void readFunctorch(const Json& c, FunctorchConfig& f) {
    take(c, "activation_memory_budget", f.activationMemoryBudget);
    take(c, "activation_memory_budget_solver", f.budgetSolver);
    take(c, "activation_memory_budget_runtime_estimator", f.budgetEstimator);
    take(c, "recompute_views", f.recomputeViews);
    take(c, "treat_parameters_as_free_to_save", f.treatParametersAsFreeToSave);
    take(c, "cse", f.cse);
    take(c, "ban_recompute_used_far_apart", f.banUsedFarApart);
    take(c, "ban_recompute_long_fusible_chains", f.banLongFusibleChains);
    take(c, "ban_recompute_materialized_backward", f.banMaterializedBackward);
    take(c, "ban_recompute_not_in_allowlist", f.banNotInAllowlist);
    take(c, "ban_recompute_reductions", f.banReductions);
    take(c, "aggressive_recomputation", f.aggressiveRecomputation);
    take(c, "max_dist_from_bw", f.maxDistFromBw);
}

void readInductor(const Json& c, InductorJointConfig& i) {
    take(c, "use_joint_graph_passes", i.useJointGraphPasses);
    take(c, "pattern_matcher", i.patternMatcher);
    take(c, "joint_graph_constant_folding", i.jointGraphConstantFolding);
    take(c, "fallback_random", i.fallbackRandom);
    auto set = [&](const char* key) {
        auto it = c.find(key);
        return it != c.end() && !it->is_null() && !(it->is_array() && it->empty());
    };
    i.customPrePass = set("joint_custom_pre_pass");
    i.customPostPass = set("joint_custom_post_pass");
    if (auto it = c.find("custom_partitioner_fn"); it != c.end() && !it->is_null())
        i.customPartitioner = it->is_string() ? it->get<std::string>() : it->dump();
}

// The string at `key`, "" when absent or of another type (a hostile log must not stop the scan).
std::string stringField(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// compilation_metrics stores the configs as JSON text inside the record.
Json embedded(const Json& metrics, const char* key) {
    auto it = metrics.find(key);
    if (it == metrics.end())
        return Json();
    if (it->is_object())
        return *it;
    if (!it->is_string())
        return Json();
    return Json::parse(it->get<std::string>(), nullptr, false);
}

std::string compileIdOf(const Json& record) {
    auto field = [&](const char* key) -> std::optional<uint64_t> {
        auto it = record.find(key);
        if (it == record.end() || !it->is_number_integer() || it->get<int64_t>() < 0)
            return std::nullopt;
        return it->get<uint64_t>();
    };
    return log_support::compileIdText(field("compiled_autograd_id"), field("frame_id"),
                                      field("frame_compile_id"), field("attempt"));
}

} // namespace

// Records only the lines that may be configuration, without parsing the others' JSON.
bool mayCarryCompileConfig(std::string_view line) {
    return line.find("\"compilation_metrics\"") != std::string_view::npos ||
           line.find("\"create_symbol\"") != std::string_view::npos ||
           (line.find("\"guard_added_fast\"") != std::string_view::npos &&
            line.find("\"expr\": \"Eq(") != std::string_view::npos) ||
           line.find("post_grad_graph\"") != std::string_view::npos ||
           line.find("\"inductor_output_code\"") != std::string_view::npos ||
           line.find("\"torch._functorch.config\"") != std::string_view::npos ||
           line.find("\"torch_version\"") != std::string_view::npos ||
           line.find("\"aotautograd_cache_hit\"") != std::string_view::npos;
}

namespace {

// A guard evaluated under suppress_guards (ShapeEnv._evaluate_expr logs it as "eval [guard suppressed]") is
// logged like any other but never joins the shape environment's guards: nothing may be concluded from it. The
// record says so only in its stack, whose last frame is that _log_guard call.
bool guardSuppressed(const Json& guard) {
    auto stack = guard.find("stack");
    if (stack == guard.end() || !stack->is_array())
        return false;
    return std::any_of(stack->begin(), stack->end(), [](const Json& frame) {
        return frame.is_object() && stringField(frame, "loc").find("[guard suppressed]") != std::string::npos;
    });
}

class ConfigScanner {
public:
    void line(std::string_view text, uint32_t lineNo) {
        if (awaitingPayload_) {
            if (!text.empty() && text.front() == '\t') {
                payload_ += text.substr(1);
                payload_ += '\n';
                return;
            }
            finishPayload();
        }
        if (text.empty() || text.front() == '\t' || !mayCarryCompileConfig(text))
            return;
        const auto prefix = log_support::parseGlogPrefix(text);
        if (!prefix)
            return;
        Json record = Json::parse(text.substr(prefix->end), nullptr, false);
        if (!record.is_object())
            return;
        if (auto it = record.find("compilation_metrics"); it != record.end() && it->is_object()) {
            metrics(*it, compileIdOf(record), lineNo);
            return;
        }
        if (auto it = record.find("create_symbol"); it != record.end() && it->is_object()) {
            createSymbol(*it, compileIdOf(record), lineNo);
            return;
        }
        if (auto it = record.find("guard_added_fast"); it != record.end() && it->is_object()) {
            const std::string expr = stringField(*it, "expr");
            if (expr.rfind("Eq(", 0) == 0 && !guardSuppressed(*it))
                open(compileIdOf(record), lineNo).equalityGuards.emplace_back(lineNo, expr);
            return;
        }
        if (record.contains("inductor_post_grad_graph") || record.contains("inductor_output_code")) {
            open(compileIdOf(record), lineNo).inductorRecords = true;
            return;
        }
        auto artifact = record.find("artifact");
        if (artifact == record.end() || !artifact->is_object())
            return;
        const std::string name = stringField(*artifact, "name");
        if (name == "before_post_grad_graph" || name == "after_post_grad_graph" ||
            name == "inductor_post_grad_graph") { // the last: torch 2.15's artifact name
            open(compileIdOf(record), lineNo).inductorRecords = true;
            return;
        }
        if (name == "aotautograd_cache_hit") {
            open(compileIdOf(record), lineNo).aotCacheHit = true;
            return;
        }
        if (name != "torch._functorch.config" && name != "torch_version")
            return;
        awaitingPayload_ = true;
        payloadName_ = name;
        payloadId_ = compileIdOf(record);
        payloadLine_ = lineNo;
        payload_.clear();
    }

    std::vector<CompileConfig> finish() && {
        if (awaitingPayload_)
            finishPayload();
        for (CompileConfig& c : configs_)
            if (c.torchVersion.empty())
                c.torchVersion = torchVersion_;
        return std::move(configs_);
    }

private:
    void finishPayload() {
        awaitingPayload_ = false;
        Json body = Json::parse(payload_, nullptr, false);
        if (!body.is_object())
            return;
        if (payloadName_ == "torch_version") {
            if (auto it = body.find("pytorch_version"); it != body.end() && it->is_string())
                torchVersion_ = it->get<std::string>();
            return;
        }
        readFunctorch(body, open(payloadId_, payloadLine_).functorch);
    }

    // {"symbol": "s77", "val": "4", ...}: a backed symbol and the value it was created from.
    void createSymbol(const Json& c, const std::string& id, uint32_t lineNo) {
        const std::string symbol = stringField(c, "symbol");
        const auto val = c.find("val");
        if (symbol.empty() || val == c.end())
            return;
        int64_t hint = 0;
        if (val->is_number_integer()) {
            hint = val->get<int64_t>();
        } else if (val->is_string()) {
            const std::string text = val->get<std::string>();
            char* end = nullptr;
            hint = std::strtoll(text.c_str(), &end, 10);
            if (!text.empty() && end != text.c_str() + text.size() && symbol.rfind("zf", 0) == 0) {
                const double value = std::strtod(text.c_str(), &end);
                if (end == text.c_str() + text.size())
                    open(id, lineNo).floatSymbolHints.emplace_back(symbol, value);
                return;
            }
            if (text.empty() || end != text.c_str() + text.size())
                return;
        } else {
            return;
        }
        open(id, lineNo).symbolHints.emplace_back(symbol, hint);
    }

    // The record's own id first: torch 2.11 names a restarted compile "0/0" inside the metrics and "0/0_1"
    // (attempt 1) on the record, as on its graphs.
    void metrics(const Json& m, const std::string& recordId, uint32_t lineNo) {
        const std::string id = recordId.empty() ? stringField(m, "compile_id") : recordId;
        CompileConfig& c = open(id, lineNo);
        c.fromMetrics = true;
        c.line = lineNo;
        if (auto it = m.find("pytorch_version"); it != m.end() && it->is_string())
            c.torchVersion = it->get<std::string>();
        else
            c.torchVersionAtMost = m.contains("recompile_user_contexts") ? "2.9" : "2.8";
        if (auto it = m.find("joint_graph_pass_time_us"); it != m.end() && it->is_number())
            c.jointGraphPassesRan = true;
        if (Json f = embedded(m, "functorch_config"); f.is_object())
            readFunctorch(f, c.functorch);
        if (Json i = embedded(m, "inductor_config"); i.is_object())
            readInductor(i, c.inductor);
        open_.erase(id); // the compile is over: a later record of the same id starts the next one
    }

    // The compile `id` being recorded (its configuration comes in several records).
    CompileConfig& open(const std::string& id, uint32_t lineNo) {
        auto it = open_.find(id);
        if (it == open_.end()) {
            CompileConfig c;
            c.compileId = id;
            c.line = lineNo;
            configs_.push_back(std::move(c));
            it = open_.emplace(id, configs_.size() - 1).first;
        }
        return configs_[it->second];
    }

    std::vector<CompileConfig> configs_;
    std::map<std::string, size_t> open_;
    std::string torchVersion_;
    bool awaitingPayload_ = false;
    std::string payloadName_, payloadId_, payload_;
    uint32_t payloadLine_ = 0;
};

} // namespace

std::vector<CompileConfig> scanCompileConfigs(std::string_view text) {
    ConfigScanner scanner;
    log_support::LineCursor cursor(text);
    while (!cursor.atEnd()) {
        const uint32_t lineNo = cursor.lineNumber();
        scanner.line(cursor.next(), lineNo);
    }
    return std::move(scanner).finish();
}

std::vector<CompileConfig> scanCompileConfigRecords(const ConfigRecords& records, const SpanReader& read) {
    ConfigScanner scanner;
    for (const ConfigRecordSpan& record : records) {
        const std::string bytes = read(record.begin, record.end);
        log_support::LineCursor cursor(bytes);
        while (!cursor.atEnd()) {
            const uint32_t lineNo = record.line + cursor.lineNumber() - 1;
            scanner.line(cursor.next(), lineNo);
        }
    }
    return std::move(scanner).finish();
}

uint64_t compileKeyOf(std::string_view compileId) {
    if (compileId.empty())
        return 0;
    uint64_t key = 14695981039346656037ull; // FNV-1a
    for (const char c : compileId)
        key = (key ^ uint8_t(c)) * 1099511628211ull;
    return key ? key : 1;
}

std::optional<CompileConfig> compileConfigFromRecords(const ConfigRecords& records,
                                                      std::string_view compileId, uint32_t line,
                                                      const SpanReader& read) {
    // The scan keeps each compile's records apart; only the torch version is shared, from records of none.
    const uint64_t key = compileKeyOf(compileId);
    ConfigRecords own;
    for (const ConfigRecordSpan& record : records)
        if (record.compileKey == key || record.compileKey == 0)
            own.push_back(record);
    const std::vector<CompileConfig> configs = scanCompileConfigRecords(own, read);
    const CompileConfig* config = findCompileConfig(configs, compileId, line);
    return config ? std::optional<CompileConfig>(*config) : std::nullopt;
}

CompileConfig configAtLine(CompileConfig config, uint32_t line) {
    std::erase_if(config.equalityGuards, [&](const auto& guard) { return guard.first >= line; });
    return config;
}

const CompileConfig* findCompileConfig(const std::vector<CompileConfig>& configs, std::string_view compileId,
                                       uint32_t line) {
    // The records of a compile follow its joint graph: the first one of that id after `line`; else the last
    // one before it.
    const CompileConfig* before = nullptr;
    for (const CompileConfig& c : configs) {
        if (c.compileId != compileId)
            continue;
        if (c.line >= line)
            return &c;
        before = &c;
    }
    return before;
}

} // namespace jointscope

// A partitioner ruleset: the op classes and switches that make our min-cut decide as one torch version does.
// Rulesets are data (resources/rulesets/*.json, compiled in); a user may load another from a file.
#pragma once

#include "graph/DType.h"
#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace jointscope {

// How _size_of measures a node.
enum class SizeModel : uint8_t {
    TensorMeta, // functorch 1.13: node.meta['tensor_meta'] of tensor outputs only, through a fixed dtype
                // table
    Val, // torch 2: node.meta['val']; tuples sum their tensors, symbolic ints count 1, unknown dims 4096
};

// The set of op overload packets of one class, keyed "aten.add", "prims.div", "operator.getitem".
class OpSet {
public:
    void insert(std::string key) { keys_.insert(std::move(key)); }
    bool contains(std::string_view key) const { return keys_.count(std::string(key)) != 0; }
    size_t size() const { return keys_.size(); }

private:
    std::unordered_set<std::string> keys_;
};

// get_aten_target(node): the overload packet for aten-style targets, else the printed target.
std::string opKey(const Target& target);

struct Ruleset {
    std::string name;
    std::string description;

    SizeModel sizeModel = SizeModel::Val;
    bool cse = true;
    bool banIfNotInAllowlist = true;
    bool banIfReduction = true;
    bool banIfMaterializedBackward = true;
    bool banIfUsedFarApart = true;
    bool banIfLongFusibleChains = true;
    int64_t maxDistFromBw = 1000; // < 0: the rule is off
    bool recomputeViews = false;
    bool treatParametersAsFreeToSave = true;
    // aot_runtime_epilogue_input_mutation (torch 2.15): an input that requires grad and whose mutation the
    // runtime epilogue replays cannot be saved, and remove_noop_ops keeps AOTAutograd's clone of it.
    bool epilogueMutatedInputsUnsaveable = false;
    // AOTAutograd runs tensorify_python_scalars on the joint graph it logged, before partitioning it.
    bool tensorifyPythonScalars = false;
    // tensorify takes the .item() of every float tensor and upcasts it to float64 (torch 2.9 on); before,
    // only a float64 tensor's, without a convert.
    bool tensorifyUpcastsFloatItems = false;
    // fuse_seed_creation_pass gives inductor_seeds its first seed's meta, checkpoint tags included
    // (torch 2.15), so a checkpointed dropout's seeds are recomputed with an RNG state instead of saved.
    bool fusedSeedsKeepMeta = false;
    // inductor's pointless_convert leaves convert(convert(x, d1), d2) alone when d1 is narrower than d2
    // (torch 2.13); before, every chain of float dtypes became convert(x, d2).
    bool pointlessConvertKeepsNarrowing = false;
    // inductor's remove_no_ops drops x + 0, x * 1, ... with a Python number for the 0 or 1 too (torch 2.14);
    // before, only when every argument is a node (a folded full).
    bool removeNoOpsTakesLiterals = false;
    // inductor's mul_softmax_pattern / div_softmax_pattern keep scale(x) - amax(scale(x)) where a scaled
    // value along the reduced dimension is not finite (torch 2.13): where(all(isfinite(..)), stable,
    // original).
    bool scaledSoftmaxKeepsNonfinite = false;
    // inductor's joint graph `patterns` hold scatter_upon_const_tensor (torch 2.10 on; before, it was a
    // post_grad pattern, which runs after the partitioner).
    bool scatterUponConstTensor = false;
    // Its where of two Python numbers is converted back to the full's dtype (.to(dtype), torch 2.13 on);
    // before, it keeps torch.where's dtype (float32, or int64 for two ints).
    bool scatterUponConstTensorKeepsDtype = false;
    // inductor's misc_patterns in the joint graph's `patterns`: index_add / index through randperm(x.size(0))
    // (or a slice [:k] of it) become _unsafe_index(_put) — randperm_index_add_pattern (sliced) from
    // torch 2.11 on, randperm_index_full_pattern and the sliced randperm_index_pattern from 2.14 (before, its
    // scalar_workaround of 42 traced no slice and a match failed the compile),
    // randperm_index_add_full_pattern from 2.15.
    bool randpermIndexAdd = false;
    bool randpermIndexAddFull = false;
    bool randpermIndexFull = false;
    bool randpermIndexSlice = false;
    // Symbols are bound by placeholders' unreplaced expressions (is_symbol_binding_fx_node's
    // _get_placeholder_expr, torch 2.14 on), and _extract_fwd_bwd_modules binds a saved value's symbols
    // before replacement too (_free_symbols_without_replacements): a specialized input's symbol is saved with
    // it. Before, two placeholders a guard made one symbol both bind it, and a specialized one binds none.
    bool bindsSpecializedSymbols = false;
    // A mutating op not tagged for the backward is extracted into the forward alone (_must_be_in_forward),
    // however computable from the backward's inputs.
    bool mutationsStayInForward = false;
    // min_cut_rematerialization_partition rebuilds the backward as reordering_to_mimic_autograd_engine runs
    // it: a node before the first that reads a tangent, which nothing after needs, is dropped (an assert).
    bool backwardMimicsAutograd = false;
    // choose_saved_values_set with no recomputable banned node left saves the inputs and the MUST_SAVE nodes
    // (torch 2.13) instead of taking the aggressive cut (torch 2.15).
    bool emptyKnapsackSavesInputs = false;
    bool honorRecomputeTags = true;   // CheckpointPolicy tags in node.meta['recompute']
    bool forceSaveCollectives = true; // force_save_collectives
    bool outputDistIsInfinite = true; // dist_from_bw of the output node: 1e9 (torch 2) or 0 (1.13)
    bool primalSourceByTargetName =
        false;                       // 1.13 ties placeholders with "primals" in their name to the source
    bool dceKeepsMutatingOps = true; // Node.is_impure() counts mutable schemas (torch >= 2.1)
    bool memoryBudget = true;        // activation_memory_budget exists
    bool bwdOutputsRequiredInBackward = true; // classify_nodes adds the backward outputs to required_bw
    bool liftFreshRecomputable = true;        // lift_fresh(_copy).default is never banned
    bool catFusesProducers = true;            // is_fusible(a, cat) holds for any a ("memory fusion" into cat)
    // fx_graph_cse keys a float argument by its bit pattern and type (_normalize_cse_arg, torch 2.14 on):
    // full(0) and full(0.0) stay two nodes, as do 0.0 and -0.0; nan arguments merge.
    bool cseKeysFloatsByBits = false;
    // fx_graph_cse hashes each flattened argument with its type (torch 2.x): mul(x, 1) and mul(x, 1.0) hash
    // apart and are never merged, though their tokens compare equal (torch 1.13 merges them).
    bool cseHashKeysTypes = false;
    bool cseKeepsBackwardDependenciesApart =
        false;                                // fx_graph_cse's extra_node_key: backward dependency or not
    bool cseSkipsOutputAliases = false;       // fx_graph_cse's nodes_that_alias_outputs are never merged
    bool defaultPartitionByPlacement = false; // default_partition takes the forward by node placement (tags)
    bool tangentsClosure =
        false; // backward outputs outside the tangents' closure may be saved (x_out -> sink)
    // reordering_to_mimic_autograd_engine: the backward runs each node right after what it needs (recomputed
    // nodes at their first use), getitems raised to their producer; off: the joint graph's order.
    bool backwardMimicsAutogradOrder = false;
    std::string torchVersion; // the torch the ruleset was generated from ("2.15.0"); empty for hand-made

    OpSet recomputable;
    OpSet views;
    OpSet random;
    OpSet computeIntensive;
    OpSet fusible; // recomputable + random
    OpSet cseExcluded;
    OpSet aliasing; // outputs share their first argument's storage (get_node_storage sees through them)
    OpSet rng;      // nondeterministic_seeded ops (is_rng_op): recomputed ones get their RNG state saved
    // rng ops that take dropout_p: its argument position and default; with dropout_p == 0 they draw nothing.
    std::unordered_map<std::string, std::pair<int, double>> rngDropoutArg;
    // Device types whose RNG state the graphs take as inputs (graphsafe_rng_functionalization, CUDA): a
    // recomputed random op there gets no saved RNG state, unless the ops span several such devices.
    std::vector<std::string> graphsafeRngDevices;
    // tensorify_python_scalars' SUPPORTED_OPS: an op that may read a SymFloat -> the overload reading a
    // tensor in its place, both as FX prints targets ("torch.ops.aten.clamp_min.default").
    std::map<std::string, std::string, std::less<>> tensorifyOps;
    std::array<uint8_t, 32> dtypeBytes{}; // by DType; 0 = this ruleset cannot size the dtype
};

// A ruleset compiled in from resources/rulesets/torch-<major.minor>.json.
struct BuiltinRuleset {
    std::string_view name; // "torch-2.15"
    std::string_view json;
};
// The built-in rulesets, oldest torch first.
std::vector<BuiltinRuleset> builtinRulesets();
std::vector<std::string_view> builtinRulesetNames();
// A built-in name ("torch-2.15"; "torch-2" / "torch-1" name the newest of that major version), or a path to a
// ruleset JSON file.
Expected<Ruleset> loadRuleset(std::string_view nameOrPath);
Expected<Ruleset> parseRuleset(std::string_view jsonText, std::string_view fileName);

} // namespace jointscope

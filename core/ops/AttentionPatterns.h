// inductor's fuse_attention patterns as data (resources/patterns/fuse-attention-torch-*.json, written by
// scripts/gen-attention-patterns from torch's own serialized patterns): what joint_graph's `patterns` pass
// matches to rewrite an eager attention into one scaled-dot-product-attention kernel, and the kernel call
// torch traces in its place.
#pragma once

#include "graph/DType.h"
#include "graph/Target.h"
#include "graph/Value.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

// One argument position of a pattern node (pattern_matcher's PatternExpr leaves, or a literal).
struct PatternArg {
    enum class Kind : uint8_t {
        Node,             // another node of the pattern (CallFunction)
        KeywordArg,       // binds the value to `name` (KeywordArg)
        ExclusiveKeyword, // the same, a value no other exclusive argument binds (ExclusiveKeywordArg)
        Ignored,          // anything (Ignored, Arg)
        Literal,          // equal to `literal`
        List,             // a list of `items`, element by element
    };
    Kind kind = Kind::Ignored;
    int32_t node = -1;
    std::string name;
    Value literal;
    std::vector<PatternArg> items;
};

// A CallFunction of the pattern: one of `targets`, its arguments, and how many readers it must have.
struct PatternNode {
    std::vector<Target> targets;
    std::vector<PatternArg> args;
    std::vector<std::pair<std::string, PatternArg>> kwargs;
    int32_t users = 1; // kMultipleUsers: any number (MULTIPLE)
    static constexpr int32_t kMultipleUsers = -1;
};

// An int of the replacement: a literal, or the product of size classes (AttentionPattern::sizeClasses).
struct SizeFormula {
    int64_t literal = 0;
    std::vector<int32_t> classes; // empty: the literal
};

// One argument of a replacement node: an input of the replacement (a bound argument or a tangent), an earlier
// replacement node, a function of a bound scalar (scale = 1 / inv_scale), a size, the query's dtype, or a
// literal.
struct ReplacementArg {
    enum class Kind : uint8_t { Input, Node, Scalar, Size, QueryDType, Literal, List };
    // sdpa's math form scales q and k each by sqrt(scale) and dropout's kept values by 1 / (1 - p)
    enum class ScalarFn : uint8_t { Identity, Reciprocal, Square, Sqrt, SqrtReciprocal, DropoutScale };
    Kind kind = Kind::Literal;
    int32_t index = -1;
    std::string scalar;
    ScalarFn fn = ScalarFn::Identity;
    SizeFormula size;
    Value literal;
    std::vector<ReplacementArg> items;
};

// A replacement node's output tensor: the query's dtype or a literal one, sizes and strides as formulas.
struct TensorFormula {
    bool queryDType = false;
    DType dtype = DType::Undefined;
    std::vector<SizeFormula> sizes;
    std::vector<SizeFormula> strides;
};

struct ReplacementNode {
    Target target;
    std::vector<ReplacementArg> args;
    std::vector<std::pair<std::string, ReplacementArg>> kwargs;
    bool tuple = false;                                // outputs a tuple (getitem reads its elements)
    std::vector<std::optional<TensorFormula>> outputs; // nullopt: not a tensor
};

struct AttentionPattern {
    std::string name; // "_sfdp_pattern_8_training"
    Target anchor;    // the first output's target: the nodes torch tries the pattern at
    std::vector<std::string>
        argnames;          // the search function's parameters (what the replacement is called with)
    bool training = false; // traced forward and backward (joint_fwd_bwd)
    // The extra check: _sfdp_params_check (q, k, v of one dtype and device, an additive mask of a usable
    // dtype), the scale node of _sfdp_extra_check a Python number, CUDA left alone.
    bool checkParams = false;
    std::optional<Target> scaleOp;
    bool disableCuda = false;

    std::vector<PatternNode> nodes;
    std::vector<int32_t> outputs; // node per output of the pattern; -1 for None

    // The replacement, in the order torch inserts its nodes; inputs are the argnames, then tangents_1...
    std::string
        notReplayed; // why jointscope cannot insert it (it depends on the inputs' shapes); "" when it can
    std::vector<std::string> inputs;
    // Each input's dims, outermost first, as the replacement was traced (empty: not a tensor); the sizes
    // classes: the (input, dim) positions that held one size in torch's example inputs.
    std::vector<std::vector<int32_t>> inputLayouts;
    std::vector<std::vector<std::pair<int32_t, int32_t>>> sizeClasses;
    std::vector<ReplacementNode> replacement;
    std::vector<ReplacementArg> replacementOutputs; // Literal None for an output torch leaves alone
};

struct AttentionPatternSet {
    std::string torchVersion;
    std::vector<AttentionPattern> patterns; // in the order torch registered them
};

Expected<AttentionPatternSet> parseAttentionPatterns(std::string_view jsonText, std::string_view fileName);

// The built-in patterns of the newest torch not newer than a ruleset's ("torch-2.14"), parsed once; null when
// none is that old (or the ruleset names no torch version).
const AttentionPatternSet* builtinAttentionPatterns(std::string_view rulesetName);

} // namespace jointscope

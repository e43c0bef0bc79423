// Call signatures of the operators graphs name (resources/ops/aten_schemas.json, generated from torch by
// scripts/gen-op-schemas), so that readers can refuse a call whose arguments cannot bind, such as `mm` with
// one argument, before an engine trips over it.
#pragma once

#include "graph/Target.h"
#include "graph/Value.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

// The parameter types the checks tell apart; the rest is Other.
enum class ParamKind : uint8_t { Tensor, TensorList, Int, IntList, Scalar, Float, Bool, String, Other };

struct OpParam {
    std::string_view name;
    ParamKind kind = ParamKind::Other;
    bool optional = false;    // Optional[...]: None is a value
    bool hasDefault = false;  // may be left out
    bool keywordOnly = false; // after '*' in the schema
};

struct OpSchema {
    std::string_view key; // "aten.mm.default", "operator.getitem"
    std::vector<OpParam> params;
    size_t positional = 0; // parameters that can be passed by position (those before '*')

    // "aten.mm.default(self: Tensor, mat2: Tensor)", for messages.
    std::string signature() const;
};

// The schema of a call_function target: an op overload (torch.ops.aten.mm.default) or an operator.* function.
// nullopt for op packets, higher-order ops, Python functions and overloads the table does not know (a newer
// or custom op): those are not checked.
std::optional<OpSchema> findOpSchema(const Target& target);

// Why args / kwargs cannot bind to schema as Python would bind them (too many positional arguments, an
// unknown or repeated keyword, a missing required argument, None or a non-tensor value for a Tensor
// parameter); nullopt when they can. Values that are kept verbatim (Opaque) are taken to fit.
std::optional<std::string> checkCallArguments(const OpSchema& schema, const std::vector<Value>& args,
                                              const std::vector<std::pair<std::string, Value>>& kwargs);

// The torch whose schemas the table holds ("2.15.0").
std::string_view opSchemaTorchVersion();

namespace detail {
struct OpSchemaEntry {
    const char* key;    // sorted by byte
    const char* params; // "self:T,other:T,*,alpha:S=" (format in scripts/gen-op-schemas)
};
} // namespace detail

} // namespace jointscope

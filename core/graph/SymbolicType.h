// Whether a symbolic value FX prints (Sym(...)) is an int, a float or a bool, read off its sympy text the way
// sympy types it: ToFloat(s0) and IntTrueDiv(a, b) are floats though they name only size symbols; Eq(s0, 2)
// is a bool; FloorToInt(zf0) is an int.
#pragma once

#include <string_view>

namespace jointscope {

enum class SymbolicType { Int, Float, Bool };

SymbolicType symbolicValueType(std::string_view expr);

} // namespace jointscope

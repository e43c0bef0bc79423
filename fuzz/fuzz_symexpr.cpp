// evaluateSymbolic and checkSymbolic on arbitrary text: never crash (no SIGFPE, no stack overflow, no signed
// overflow under UBSan), and agree with each other. The bindings hold the int64 extremes, so that arithmetic
// on symbols reaches every overflow check.
#include "FuzzSupport.h"

#include "graph/SymbolicExpr.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view expr = fuzz::asText(data, size);
    static const SymbolBindings none;
    static const SymbolBindings extremes = {{"s0", 3},
                                            {"s1", std::numeric_limits<int64_t>::max()},
                                            {"s2", std::numeric_limits<int64_t>::min()},
                                            {"s3", -1},
                                            {"s4", 0},
                                            {"u0", 1 << 20}};
    const SymbolicCheck check = checkSymbolic(expr);
    const Expected<int64_t> constant = evaluateSymbolic(expr, none);
    const Expected<int64_t> bound = evaluateSymbolic(expr, extremes);
    auto die = [&](const char* what) {
        std::fprintf(stderr, "%s for '%.*s'\n", what, int(expr.size()), expr.data());
        std::abort();
    };
    if (!constant && constant.error().message.empty())
        die("evaluateSymbolic failed without a message");
    if (check.issue && (constant || bound))
        die("checkSymbolic refused an expression evaluateSymbolic accepts");
    if (check.constant && (!constant || *constant != *check.constant))
        die("checkSymbolic folded a constant evaluateSymbolic does not give");
    if (constant && !check.constant)
        die("evaluateSymbolic gave a value without symbols that checkSymbolic did not fold");
    if (constant && (!bound || *bound != *constant))
        die("binding symbols changed the value of an expression without symbols");
    return 0;
}

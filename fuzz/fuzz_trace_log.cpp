// indexTraceLog on arbitrary bytes, then readFxText of every payload it finds (what opening a log does).
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return jointscope::fuzz::fuzzLogIndex(data, size, &jointscope::looksLikeTraceLog,
                                          &jointscope::indexTraceLog, "fuzz.log");
}

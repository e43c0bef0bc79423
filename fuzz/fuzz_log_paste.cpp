// indexLogPaste on arbitrary bytes (glog / logging prefixes, ANSI escapes, ranks), then every payload it
// finds.
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return jointscope::fuzz::fuzzLogIndex(data, size, &jointscope::looksLikeLogPaste,
                                          &jointscope::indexLogPaste, "fuzz.paste");
}

// JOINTSCOPE_VECTORISE compiles a hot loop's function at -O3 under GCC, so that the loop vectorises in
// RelWithDebInfo builds (-O2) too: the min-sum kernels of the sharding solve.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#define JOINTSCOPE_VECTORISE __attribute__((optimize("O3")))
#else
#define JOINTSCOPE_VECTORISE
#endif

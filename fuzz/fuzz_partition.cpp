// The partition engine on whatever graph the FX reader accepts: min-cut under both rulesets, a memory budget, the
// default partition and the dI/dW split must either succeed or explain themselves, never crash.
#include "FuzzSupport.h"

#include "io/FxReader.h"
#include "partition/Partitioner.h"
#include "partition/SplitDw.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    using namespace jointscope::partition;
    FxReadOptions options;
    options.fileName = "fuzz.py";
    Expected<Graph> graph = readFxText(fuzz::asText(data, size), options);
    if (!graph)
        return 0;
    if (!graph->numFwdOutputs)
        graph->numFwdOutputs = 1; // a joint graph's first output is usually a forward output
    static const Ruleset torch2 = *loadRuleset("torch-2");
    static const Ruleset torch113 = *loadRuleset("torch-1.13");
    for (const Ruleset* rules : {&torch2, &torch113}) {
        (void)partitionJoint(*graph, *rules, {});
        PartitionOptions budget;
        budget.memoryBudget = 0.5;
        (void)partitionJoint(*graph, *rules, budget);
    }
    PartitionOptions dflt;
    dflt.strategy = Strategy::Default;
    (void)partitionJoint(*graph, torch2, dflt);
    (void)splitDiDw(*graph, 1);
    return 0;
}

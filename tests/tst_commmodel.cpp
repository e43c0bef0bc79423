// The measured collective model (core/sharding/CommModel): piecewise α-β evaluation, its use by collectiveUs
// and redistribute, the errors for what was not measured, and the profile DB's "collectives" (format version
// 2).
//
// Expected times are worked out by hand from the segments: latency_us + bytes / bytes_per_s * 1e6.
#include "cost/ProfileDb.h"
#include "sharding/CommModel.h"
#include "sharding/Cost.h"

#include <QTest>

using namespace jointscope;
using namespace jointscope::sharding;

namespace {

cost::CollectiveFit fit(std::vector<int64_t> mesh, int64_t dim, std::string collective,
                        std::vector<cost::CommSegment> segments) {
    cost::CollectiveFit f;
    f.backend = "gloo";
    f.torchVersion = "2.15.0";
    f.hosts = {"ci"};
    f.worldSize = 4;
    f.groupSize = mesh[static_cast<size_t>(dim)];
    f.mesh = std::move(mesh);
    f.dim = dim;
    f.collective = std::move(collective);
    f.segments = std::move(segments);
    f.measuredAt = "2026-11-25T01:00:00Z";
    return f;
}

// Every collective on both dimensions of a 2x2 mesh; dimension 0 bends at 64 KiB.
std::vector<cost::CollectiveFit> fits2x2() {
    std::vector<cost::CollectiveFit> out;
    for (const char* c : {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"}) {
        out.push_back(fit({2, 2}, 0, c, {{65536.0, 50, 1e9}, {std::nullopt, 200, 4e9}}));
        out.push_back(fit({2, 2}, 1, c, {{std::nullopt, 10, 2e10}}));
    }
    return out;
}

DeviceMesh mesh2x2() {
    return DeviceMesh::make({2, 2}, {}, *findTopology("h100"));
}

} // namespace

class TestCommModel : public QObject {
    Q_OBJECT

private slots:
    void piecewiseSegments() {
        const std::vector<cost::CommSegment> s = {{65536.0, 50, 1e9}, {std::nullopt, 200, 4e9}};
        QCOMPARE(segmentsUs(s, 4096), 54.096);     // 50 + 4096 / 1e9 s
        QCOMPARE(segmentsUs(s, 65536), 115.536);   // the bound belongs to the first segment
        QCOMPARE(segmentsUs(s, 1048576), 462.144); // 200 + 1048576 / 4e9 s
        QCOMPARE(segmentsUs({{std::nullopt, 10, 2e10}}, 2e6), 110.0);
    }

    void collectiveUsUsesMeasuredModel() {
        DeviceMesh mesh = mesh2x2();
        const double analytic = collectiveUs(Collective::AllGather, 1048576, mesh, 0);
        Expected<CommModel> model = CommModel::measured(fits2x2(), mesh);
        QVERIFY(model);
        mesh.comm = std::make_shared<const CommModel>(model.take());
        QCOMPARE(commModelKind(mesh), std::string_view("measured"));
        QVERIFY(commModelDescription(mesh).find("gloo 2x2") != std::string::npos);
        QCOMPARE(collectiveUs(Collective::AllGather, 1048576, mesh, 0), 462.144);
        QCOMPARE(collectiveUs(Collective::AllToAll, 4096, mesh, 0), 54.096);
        QCOMPARE(collectiveUs(Collective::AllReduce, 2e6, mesh, 1), 110.0);
        QVERIFY(analytic != 462.144);

        // S(0)R -> RR of an f32[1024, 256] tensor (1 MiB). Gathering dimension 0 directly costs 462.144 us;
        // the measured dimension 1 is so much faster that splitting the tensor over it first (free),
        // gathering 512 KiB over dimension 0 (200 + 524288 / 4e9 s = 331.072 us), then 1 MiB over dimension 1
        // (10 + 1048576 / 2e10 s = 62.4288 us) is cheaper: 393.5008 us.
        TensorMeta t;
        t.dtype = DType::Float32;
        t.sizes = {SymInt{1024, {}}, SymInt{256, {}}};
        const Redistribution r = redistribute(*parsePlacements("S(0)R"), *parsePlacements("RR"), t, mesh);
        QCOMPARE(r.steps.size(), size_t(2));
        QCOMPARE(r.steps[0].collective, Collective::AllGather);
        QCOMPARE(r.steps[0].meshDim, size_t(0));
        QCOMPARE(r.steps[0].bytes, 524288.0);
        QCOMPARE(r.steps[0].us, 331.072);
        QCOMPARE(r.steps[1].meshDim, size_t(1));
        QCOMPARE(r.steps[1].us, 62.4288);
        QCOMPARE(r.us, 393.5008);
    }

    void missingMeasurementIsAnError() {
        std::vector<cost::CollectiveFit> fits = fits2x2();
        std::erase_if(
            fits, [](const cost::CollectiveFit& f) { return f.dim == 1 && f.collective == "all_to_all"; });
        Expected<CommModel> model = CommModel::measured(fits, mesh2x2());
        QVERIFY(!model);
        const std::string m = model.error().message;
        QVERIFY2(m.find("no measured all_to_all on dimension 1 of mesh 2x2") != std::string::npos, m.c_str());
        QVERIFY2(m.find("torchrun --nproc_per_node 4 -m jointscope_torch.calibrate --mesh 2x2") !=
                     std::string::npos,
                 m.c_str());

        // Another mesh's measurements do not stand in for this one's.
        std::vector<cost::CollectiveFit> other;
        for (const char* c : {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"})
            for (int64_t d : {0, 1})
                other.push_back(fit({2, 4}, d, c, {{std::nullopt, 10, 1e9}}));
        Expected<CommModel> wrongMesh = CommModel::measured(other, mesh2x2());
        QVERIFY(!wrongMesh);
        QVERIFY2(wrongMesh.error().message.find("it has meshes 2x4") != std::string::npos,
                 wrongMesh.error().message.c_str());

        // A dimension of one device communicates nothing and needs no measurement.
        std::vector<cost::CollectiveFit> dim0;
        for (const char* c : {"all_gather", "reduce_scatter", "all_reduce", "all_to_all"})
            dim0.push_back(fit({4, 1}, 0, c, {{std::nullopt, 10, 1e9}}));
        QVERIFY(CommModel::measured(dim0, DeviceMesh::make({4, 1}, {}, *findTopology("h100"))));
    }

    void profileDbRoundTrip() {
        auto opened = cost::ProfileDb::open(":memory:");
        QVERIFY(opened);
        std::unique_ptr<cost::ProfileDb> db = opened.take();
        const std::string text = R"({"format": "jointscope-profile", "version": 2, "records": [],
 "collectives": [
  {"backend": "gloo", "torch": "2.15.0", "hosts": ["ci"], "world_size": 4, "mesh": [2, 2], "dim": 1,
   "group_size": 2, "collective": "all_reduce",
   "segments": [{"max_bytes": 65536, "latency_us": 50, "bytes_per_s": 1e9},
                {"max_bytes": null, "latency_us": 200, "bytes_per_s": 4e9}],
   "samples": [[4096, 55.0], [1048576, 460.5]], "reps": 5, "rms_rel_error": 0.02,
   "measured_at": "2026-11-25T01:00:00Z"}
 ]})";
        Expected<size_t> n = db->importJson(text, "c.json");
        QVERIFY2(n, n ? "" : n.error().message.c_str());
        QCOMPARE(*n, size_t(1));
        const std::vector<cost::CollectiveFit> back = db->collectives();
        QCOMPARE(back.size(), size_t(1));
        QCOMPARE(back[0].collective, std::string("all_reduce"));
        QCOMPARE(back[0].segments.size(), size_t(2));
        QCOMPARE(*back[0].segments[0].maxBytes, 65536.0);
        QCOMPARE(back[0].segments[1].bytesPerSecond, 4e9);
        QCOMPARE(back[0].samples[1].second, 460.5);
        // Export writes version 2 with the entry; importing that again gives the same fit.
        const std::string exported = db->exportJson();
        QVERIFY(exported.find("\"version\": 2") != std::string::npos);
        auto again = cost::ProfileDb::open(":memory:");
        QVERIFY(again);
        QVERIFY((*again)->importJson(exported, "e.json"));
        QCOMPARE((*again)->collectives(), back);

        // Collectives need version 2; a segment without a bandwidth is refused at its place.
        std::string v1 = text;
        v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
        QVERIFY(!db->importJson(v1, "c.json"));
        std::string bad = text;
        bad.replace(bad.find("\"bytes_per_s\": 4e9"), 18, "\"bytes_per_s\": 0");
        Expected<size_t> refused = db->importJson(bad, "c.json");
        QVERIFY(!refused);
        QVERIFY2(refused.error().message.find("collectives[0].segments") != std::string::npos,
                 refused.error().message.c_str());
        QCOMPARE(refused.error().loc.line, uint32_t(5));
    }
};

QTEST_GUILESS_MAIN(TestCommModel)
#include "tst_commmodel.moc"

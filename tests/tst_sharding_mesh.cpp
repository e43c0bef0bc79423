// Meshes of three and four dimensions: the decomposed solve (column generation, dual ascent, a Lagrangian
// lower bound) against references it does not compute itself: every assignment of small random models
// enumerated, and the exact ILP (the reduced model's whole LP, branched) on real joint graphs.
#include "pairmodel_testutil.h"
#include "testutil.h"

#include "cost/DeviceSpec.h"
#include "sharding/Cost.h"
#include "sharding/PairBound.h"
#include "sharding/Solver.h"

#include <nlohmann/json.hpp>

#include <QTest>
#include <QVector>

#include <cmath>
#include <limits>
#include <random>

using namespace jointscope;
using namespace jointscope::test;
using namespace jointscope::sharding;

namespace {

Graph sharedGraph(const std::string& name) {
    return loadGraphAt(sharedPath("graphs/torch-1.13/" + name + "/joint.txt"));
}

DeviceMesh mesh(std::vector<int64_t> shape) {
    return DeviceMesh::make(std::move(shape), {}, *findTopology("h100"));
}

// A bf16 activation of 16 x 64 x 4096.
TensorMeta rank3Tensor() {
    TensorMeta t;
    t.dtype = DType::BFloat16;
    t.sizes = {SymInt{16, {}}, SymInt{64, {}}, SymInt{4096, {}}};
    return t;
}

// `count` random layouts of a rank-3 tensor on `ndim` mesh dimensions, with partials of every kind; the
// last is all-Sum.
std::vector<Placements> randomLayouts(size_t ndim, int count, unsigned seed) {
    const std::vector<Placement> each = {Placement::replicate(),
                                         Placement::shard(0),
                                         Placement::shard(1),
                                         Placement::shard(2),
                                         Placement::partial(ReduceOp::Sum),
                                         Placement::partial(ReduceOp::Avg),
                                         Placement::partial(ReduceOp::Max)};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, each.size() - 1);
    std::vector<Placements> layouts;
    for (int i = 0; i + 1 < count; ++i) {
        Placements p;
        for (size_t d = 0; d < ndim; ++d)
            p.push_back(each[pick(rng)]);
        layouts.push_back(p);
    }
    layouts.push_back(Placements(ndim, Placement::partial(ReduceOp::Sum)));
    return layouts;
}

bool atMost(double a, double b) {
    return a <= b + 1e-6 * (1.0 + std::fabs(b));
}

} // namespace

class TestShardingMesh : public QObject {
    Q_OBJECT

private slots:
    // The ILP's edge tables agree with redistribute(), a search of its own per pair over the layouts its two
    // ends suggest, on 3-D and 4-D meshes with partial reductions of every kind; scaled by the copies of the
    // edge. Both ways the tables are searched: a search per source (few sources) and every pair at once.
    void redistributionTablesMatchSingleSearches_data() {
        QTest::addColumn<QVector<qint64>>("shape");
        QTest::addColumn<int>("sources");
        QTest::newRow("2x4x2, all pairs") << QVector<qint64>{2, 4, 2} << 60;
        QTest::newRow("2x2x4x4, per source") << QVector<qint64>{2, 2, 4, 4} << 60;
        QTest::newRow("2x2x4x4, all pairs") << QVector<qint64>{2, 2, 4, 4} << 200;
    }
    void redistributionTablesMatchSingleSearches() {
        QFETCH(QVector<qint64>, shape);
        QFETCH(int, sources);
        const TensorMeta t = rank3Tensor();
        const DeviceMesh m = mesh(std::vector<int64_t>(shape.begin(), shape.end()));
        const std::vector<Placements> layouts = randomLayouts(shape.size(), sources, 17);
        std::vector<const Placements*> from, to;
        for (const Placements& p : layouts)
            from.push_back(&p);
        for (size_t p = 0; p < 40; ++p)
            to.push_back(&layouts[p]);
        to.push_back(&layouts.back()); // all-Sum: the table's space still holds what the other side needs
        RedistributionCache cache(m);
        const std::vector<double> table = cache.table(from, to, t, 3.0);
        int nonzero = 0;
        for (size_t q = 0; q < from.size(); ++q)
            for (size_t p = 0; p < to.size(); ++p) {
                const double single = 3.0 * redistribute(*from[q], *to[p], t, m).us;
                QVERIFY2(std::fabs(table[q * to.size() + p] - single) <= 1e-9 * (1.0 + single),
                         qPrintable(QString::fromStdString(toString(*from[q]) + " -> " + toString(*to[p]))));
                QVERIFY(std::fabs(cache.us(*from[q], *to[p], t) * 3.0 - single) <= 1e-9 * (1.0 + single));
                nonzero += single > 0;
            }
        QVERIFY(nonzero > static_cast<int>(from.size()));
    }

    // A redistribution table's min-sum products through its arcs (the ascent's messages) equal the products
    // over the table of single searches, forward and backward, with some keys left out (infinite labels).
    void metricProductsMatchTheTable() {
        const TensorMeta t = rank3Tensor();
        const DeviceMesh m = mesh({2, 2, 4, 4});
        const std::vector<Placements> layouts = randomLayouts(4, 50, 23);
        std::vector<const Placements*> keys;
        for (const Placements& p : layouts)
            keys.push_back(&p);
        RedistributionCache cache(m);
        const RedistributionCache::MetricTable mt = cache.metricTable(keys, t, 2.0);
        QVERIFY(mt.metric.has_value());
        const size_t n = keys.size();
        std::vector<double> single(n * n);
        for (size_t k = 0; k < n; ++k)
            for (size_t l = 0; l < n; ++l)
                single[k * n + l] = 2.0 * redistribute(*keys[k], *keys[l], t, m).us;
        std::mt19937 rng(5);
        std::uniform_real_distribution<double> label(-500.0, 500.0);
        MetricProduct product;
        for (int trial = 0; trial < 6; ++trial) {
            std::vector<double> h(n);
            for (size_t k = 0; k < n; ++k)
                h[k] = k % 3 == static_cast<size_t>(trial % 3) ? std::numeric_limits<double>::infinity()
                                                               : label(rng);
            for (bool forward : {true, false}) {
                std::vector<double> out;
                product.minPlus(*mt.metric, forward, h, out);
                QCOMPARE(out.size(), n);
                for (size_t x = 0; x < n; ++x) {
                    double expected = std::numeric_limits<double>::infinity();
                    for (size_t y = 0; y < n; ++y)
                        expected =
                            std::min(expected, h[y] + (forward ? single[y * n + x] : single[x * n + y]));
                    QVERIFY2(std::fabs(out[x] - expected) <= 1e-9 * (1.0 + std::fabs(expected)),
                             qPrintable(QString("trial %1, %2, key %3: %4 != %5")
                                            .arg(trial)
                                            .arg(forward ? "forward" : "backward")
                                            .arg(x)
                                            .arg(out[x])
                                            .arg(expected)));
                }
            }
        }
    }

    // The bound never passes the enumerated optimum and the plan's cost is its true cost, so the reported
    // gap always covers the distance to the optimum; with no gap allowed, most small models close it.
    void generationBoundsTheOptimum() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        int feasible = 0, closed = 0, infeasible = 0;
        forEachRandomModel(20261125, 300, [&](int trial, const PairModel& m, double best) {
            GenerationOptions options;
            options.gap = 0;
            options.timeLimitSeconds = 2;
            const GenerationResult r = solveByGeneration(m, options);
            const QString where = QString("trial %1: optimum %2, plan %3, bound %4")
                                      .arg(trial)
                                      .arg(best)
                                      .arg(r.cost)
                                      .arg(r.lowerBound);
            if (best == PairModel::kForbidden) {
                QVERIFY2(!r.feasible, qPrintable(where));
                ++infeasible;
                return;
            }
            QVERIFY2(r.feasible, qPrintable(where));
            ++feasible;
            QVERIFY2(std::fabs(assignmentCost(m, r.choice) - r.cost) < 1e-9, qPrintable(where));
            QVERIFY2(atMost(best, r.cost), qPrintable(where));
            QVERIFY2(atMost(r.lowerBound, best), qPrintable(where));
            closed += r.cost - r.lowerBound <= 1e-6 * (1.0 + std::fabs(r.cost));
        });
        QVERIFY2(infeasible > 0, qPrintable(QString::number(infeasible)));
        qInfo("%d of %d feasible models closed the gap, %d infeasible", closed, feasible, infeasible);
        QVERIFY2(closed >= feasible * 9 / 10, qPrintable(QString("%1 of %2").arg(closed).arg(feasible)));
#endif
    }

    // On 3-D and 4-D meshes, the decomposed plan is within its certified gap of the exact ILP's optimum, and
    // its bound below that optimum.
    void decomposedWithinGapOfExact_data() {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<QString>("meshShape");
        QTest::newRow("mlp 2x2x2") << "mlp"
                                   << "2x2x2";
        QTest::newRow("gpt_block2 2x2x2") << "gpt_block2"
                                          << "2x2x2";
        QTest::newRow("mlp 2x2x2x2") << "mlp"
                                     << "2x2x2x2";
    }
    void decomposedWithinGapOfExact() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        QFETCH(QString, graph);
        QFETCH(QString, meshShape);
        const Graph g = sharedGraph(graph.toStdString());
        const ShardingProblem p = buildStrategies(g, mesh(*parseMeshShape(meshShape.toStdString())));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        SolveOptions exactOptions;
        exactOptions.method = SolveOptions::Method::Exact;
        Expected<Plan> exact = solvePlacement(g, p, exactOptions, model);
        JS_VERIFY_EXPECTED(exact);
        QVERIFY(exact->optimal);
        QVERIFY(!exact->decomposed);
        const double optimum = exact->cost.totalUs();
        // The exact path's bound is its relaxation: at the optimum when the LP is integral.
        QVERIFY(atMost(exact->lowerBound, optimum));

        SolveOptions options;
        options.method = SolveOptions::Method::Decomposed;
        options.gap = 0.01;
        Expected<Plan> plan = solvePlacement(g, p, options, model);
        JS_VERIFY_EXPECTED(plan);
        QVERIFY(plan->decomposed);
        const double cost = plan->cost.totalUs();
        const QString where =
            QString("optimum %1, plan %2, bound %3").arg(optimum).arg(cost).arg(plan->lowerBound);
        QVERIFY2(std::fabs(evaluatePlan(g, p, plan->choice, model).totalUs() - cost) < 1e-6,
                 qPrintable(where));
        QVERIFY2(atMost(optimum, cost), qPrintable(where));
        QVERIFY2(atMost(plan->lowerBound, optimum), qPrintable(where));
        QVERIFY2(plan->gap() <= 0.01 + 1e-12, qPrintable(where));
        QVERIFY2(atMost(cost - optimum, cost - plan->lowerBound), qPrintable(where));

        // With no gap allowed, reduced-cost fixing leaves these graphs an ILP small enough to solve outright:
        // the exact optimum, proven, and a bound equal to it.
        options.gap = 0;
        Expected<Plan> proven = solvePlacement(g, p, options, model);
        JS_VERIFY_EXPECTED(proven);
        const QString provenWhere = QString("optimum %1, plan %2, bound %3")
                                        .arg(optimum, 0, 'g', 12)
                                        .arg(proven->cost.totalUs(), 0, 'g', 12)
                                        .arg(proven->lowerBound, 0, 'g', 12);
        QVERIFY2(proven->optimal, qPrintable(provenWhere));
        QVERIFY2(std::fabs(proven->cost.totalUs() - optimum) <= 1e-9 * optimum, qPrintable(provenWhere));
        QVERIFY2(atMost(proven->lowerBound, optimum), qPrintable(provenWhere));
        QVERIFY2(proven->lowerBound >= optimum * (1 - 1e-9), qPrintable(provenWhere));
#endif
    }

    // The parameter-memory window, relaxed into the decomposed solve's bound: with no gap allowed its plan is
    // the exact optimum under the window, proven, and its parameters' local bytes (counted here from the
    // plan's placements) lie inside the window.
    void decomposedKeepsTheMemoryWindow_data() {
        QTest::addColumn<double>("high");
        QTest::newRow("a third") << 0.3;
        QTest::newRow("an eighth") << 0.125;
    }
    void decomposedKeepsTheMemoryWindow() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        QFETCH(double, high);
        const Graph g = sharedGraph("mlp");
        const ShardingProblem p = buildStrategies(g, mesh({2, 2, 2}));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        SolveOptions options;
        options.paramMemoryHigh = high;
        options.method = SolveOptions::Method::Exact;
        Expected<Plan> exact = solvePlacement(g, p, options, model);
        JS_VERIFY_EXPECTED(exact);
        QVERIFY(exact->optimal);
        options.method = SolveOptions::Method::Decomposed;
        options.gap = 0;
        Expected<Plan> plan = solvePlacement(g, p, options, model);
        JS_VERIFY_EXPECTED(plan);
        QVERIFY(plan->decomposed);
        const double optimum = exact->cost.totalUs(), cost = plan->cost.totalUs();
        const QString where =
            QString("optimum %1, plan %2, bound %3").arg(optimum).arg(cost).arg(plan->lowerBound);
        QVERIFY2(std::fabs(cost - optimum) <= 1e-9 * optimum, qPrintable(where));
        QVERIFY2(plan->optimal, qPrintable(where));
        QVERIFY2(atMost(plan->lowerBound, optimum), qPrintable(where));
        double local = 0, full = 0;
        for (const auto& [param, grad] : jointRoles(g).paramGrad) {
            const TensorMeta* t = g.node(param).tensor();
            const double bytes = static_cast<double>(cost::numel(*t)) * 4;
            full += bytes;
            double frac = 1;
            for (const Placement& x : p.nodes[param].options[plan->choice[param]].outputs[0])
                frac /= x.isShard() ? 2 : 1;
            local += bytes * frac;
        }
        QVERIFY(full > 0);
        QVERIFY2(local <= high * full * (1 + 1e-9),
                 qPrintable(QString("%1 of %2 bytes").arg(local).arg(full)));
        // Without the window the same graph is cheaper: the window binds, so the test can tell.
        SolveOptions free;
        free.method = SolveOptions::Method::Exact;
        Expected<Plan> unbound = solvePlacement(g, p, free, model);
        JS_VERIFY_EXPECTED(unbound);
        QVERIFY2(unbound->cost.totalUs() < optimum * (1 - 1e-6), qPrintable(where));
#endif
    }

    // Auto: the exact path on a small graph over three mesh dimensions, the decomposed one over four, where
    // options per node run to a thousand and more (SolveOptions::Method); either way the plan's cost is its
    // recomputation under the model and the bound lies below it.
    void autoDecomposesOnFourDimensions() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        const Graph g = sharedGraph("mlp");
        const cost::RooflineModel model(*cost::findDevice("h100"));
        for (const std::vector<int64_t>& shape :
             {std::vector<int64_t>{2, 2, 2}, std::vector<int64_t>{2, 2, 2, 2}}) {
            const ShardingProblem p = buildStrategies(g, mesh(shape));
            Expected<Plan> plan = solvePlacement(g, p, SolveOptions{}, model);
            JS_VERIFY_EXPECTED(plan);
            QCOMPARE(plan->decomposed, shape.size() == 4);
            QVERIFY(std::fabs(evaluatePlan(g, p, plan->choice, model).totalUs() - plan->cost.totalUs()) <
                    1e-6);
            QVERIFY(atMost(plan->lowerBound, plan->cost.totalUs()));
            QVERIFY(plan->gap() <= 0.01 + 1e-12);
        }
#endif
    }

    // shard --json reports the bound and the gap; the text says "cost X, lower bound Y, gap Z %".
    void cliReportsBoundAndGap() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        const QString file = QString::fromStdString(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const Run r = runCli({"shard", file, "--mesh", "2x2x2", "--solver", "decomposed", "--json"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        QCOMPARE(j["solver"].get<std::string>(), std::string("decomposed"));
        const double total = j["total_cost"].get<double>(), bound = j["lower_bound"].get<double>();
        QVERIFY(bound > 0 && atMost(bound, total));
        QVERIFY(std::fabs(j["gap"].get<double>() - (total - bound) / total) < 1e-9);
        QVERIFY(j["gap"].get<double>() <= 0.01 + 1e-12);

        // A graph this small is solved exactly by default, its bound the integral relaxation's optimum.
        const Run exact = runCli({"shard", file, "--mesh", "2x2x2", "--json"});
        QCOMPARE(exact.exitCode, 0);
        const nlohmann::json e = nlohmann::json::parse(exact.out);
        QCOMPARE(e["solver"].get<std::string>(), std::string("exact"));
        QVERIFY(atMost(e["total_cost"].get<double>(), total));
        QVERIFY(atMost(bound, e["total_cost"].get<double>()));
        QVERIFY(std::fabs(e["lower_bound"].get<double>() - e["total_cost"].get<double>()) <=
                1e-6 * e["total_cost"].get<double>());

        const Run text = runCli({"shard", file, "--mesh", "2x2x2"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.find(", lower bound ") != std::string::npos &&
                     text.out.find(" %") != std::string::npos,
                 text.out.c_str());
        const Run bad = runCli({"shard", file, "--mesh", "2x2x2", "--solver", "fast"});
        QCOMPARE(bad.exitCode, 64);
        QVERIFY(bad.err.find("--solver") != std::string::npos);
#endif
    }
};

QTEST_GUILESS_MAIN(TestShardingMesh)
#include "tst_sharding_mesh.moc"

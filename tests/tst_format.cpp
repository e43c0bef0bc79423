// support/Format.h and sharding::formatPlacements: the text of every quantity the CLI and the GUI show. Each
// row's expected text is written by hand from the rule in the header (three significant digits in the largest
// unit that keeps the number at least 1; bytes in binary units with one decimal).
#include "sharding/Placement.h"
#include "support/Format.h"

#include <QTest>

#include <cstdint>
#include <limits>

using namespace jointscope;

class TestFormat : public QObject {
    Q_OBJECT
private slots:
    void bytes_data() {
        QTest::addColumn<quint64>("bytes");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << quint64(0) << "0 B";
        QTest::newRow("bytes") << quint64(512) << "512 B";
        QTest::newRow("last whole bytes") << quint64(1023) << "1023 B";
        QTest::newRow("one KiB") << quint64(1024) << "1.0 KiB";
        QTest::newRow("half") << quint64(1536) << "1.5 KiB";
        QTest::newRow("12 KiB") << quint64(12288) << "12.0 KiB";
        QTest::newRow("3.4 MiB") << quint64(3565158) << "3.4 MiB";
        QTest::newRow("one GiB") << (quint64(1) << 30) << "1.0 GiB";
        QTest::newRow("5 TiB") << (quint64(5) << 40) << "5.0 TiB";
        QTest::newRow("beyond TiB stays TiB") << (quint64(2048) << 40) << "2048.0 TiB";
        QTest::newRow("largest") << std::numeric_limits<quint64>::max() << "16777216.0 TiB";
    }
    void bytes() {
        QFETCH(quint64, bytes);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatBytes(bytes)), text);
    }

    void micros_data() {
        QTest::addColumn<double>("us");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << "0.00 µs";
        QTest::newRow("below one") << 0.523 << "0.52 µs";
        QTest::newRow("two decimals") << 2.5 << "2.50 µs";
        QTest::newRow("just below ten") << 9.994 << "9.99 µs";
        QTest::newRow("rounds to ten") << 9.996 << "10.0 µs";
        QTest::newRow("one decimal") << 12.34 << "12.3 µs";
        QTest::newRow("rounds to 100") << 99.96 << "100 µs";
        QTest::newRow("whole") << 480.0 << "480 µs";
        QTest::newRow("just below 1 ms") << 999.4 << "999 µs";
        QTest::newRow("rounds to 1 ms") << 999.6 << "1.00 ms";
        QTest::newRow("ms") << 8810.0 << "8.81 ms";
        QTest::newRow("hundreds of ms") << 123456.0 << "123 ms";
        QTest::newRow("seconds") << 1.2e6 << "1.20 s";
        QTest::newRow("an hour stays in s") << 3.6e9 << "3600 s";
        QTest::newRow("negative") << -12.34 << "-12.3 µs";
    }
    void micros() {
        QFETCH(double, us);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatMicros(us)), text);
    }

    void flops_data() {
        QTest::addColumn<double>("flops");
        QTest::addColumn<QString>("text");
        QTest::newRow("zero") << 0.0 << "0 FLOP";
        QTest::newRow("whole operations") << 512.0 << "512 FLOP";
        QTest::newRow("just below k") << 999.0 << "999 FLOP";
        QTest::newRow("rounds to 1 k") << 999.6 << "1.00 kFLOP";
        QTest::newRow("k") << 1500.0 << "1.50 kFLOP";
        QTest::newRow("M") << 64e6 << "64.0 MFLOP";
        QTest::newRow("G") << 12.3e9 << "12.3 GFLOP";
        QTest::newRow("T") << 2e12 << "2.00 TFLOP";
        QTest::newRow("P") << 4.5e15 << "4.50 PFLOP";
        QTest::newRow("beyond P stays P") << 7e18 << "7000 PFLOP";
    }
    void flops() {
        QFETCH(double, flops);
        QFETCH(QString, text);
        QCOMPARE(QString::fromStdString(formatFlops(flops)), text);
    }

    void placements_data() {
        QTest::addColumn<QStringList>("placements"); // each parsed by sharding::parsePlacements
        QTest::addColumn<QString>("text");
        QTest::newRow("none") << QStringList{} << "—";
        QTest::newRow("one") << QStringList{"S(0)R"} << "S(0)R";
        QTest::newRow("partial") << QStringList{"P(sum)S(1)"} << "P(sum)S(1)";
        QTest::newRow("torch's long form") << QStringList{"Shard(dim=1), Replicate()"} << "S(1)R";
        QTest::newRow("several") << QStringList{"S(0)R", "RR", "RS(2)"} << "(S(0)R, RR, RS(2))";
    }
    void placements() {
        QFETCH(QStringList, placements);
        QFETCH(QString, text);
        std::vector<sharding::Placements> parsed;
        for (const QString& p : placements) {
            auto one = sharding::parsePlacements(p.toStdString());
            QVERIFY2(one, qPrintable(p));
            parsed.push_back(*one);
        }
        QCOMPARE(QString::fromStdString(sharding::formatPlacements(parsed)), text);
    }
};

QTEST_GUILESS_MAIN(TestFormat)
#include "tst_format.moc"

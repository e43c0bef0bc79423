// Validate and profile in the window: the Runtime dock (jointscope-cli run as a child process,
// views/panels/RuntimePanel) and Tools › Validate Partition / Profile Graph.
#pragma once

#include "FeatureContext.h"

#include "Feature.h"

#include <QObject>

#include <functional>
#include <string>

class QAction;
class QDockWidget;

namespace jointscope::views {
class RuntimePanel;
}

namespace jointscope::gui {

class RuntimeFeature : public Feature {
    Q_OBJECT
public:
    struct Actions {
        QAction* validate = nullptr;
        QAction* profile = nullptr;
        QAction* remeasure = nullptr; // profile, measuring every op again
    };

    // `decision` is the partition decision JSON Validate checks (empty: none yet).
    RuntimeFeature(const FeatureContext& context, std::function<std::string()> decision,
                   QObject* parent = nullptr);

    views::RuntimePanel* panel() const { return panel_; }
    QDockWidget* dock() const { return dock_; }
    const Actions& actions() const { return actions_; }
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;
    void setGraph(const ShownGraph& shown) override;
    void levelShown() override;

private:
    FeatureContext ctx_;
    Actions actions_;
    views::RuntimePanel* panel_ = nullptr;
    QDockWidget* dock_ = nullptr;
};

} // namespace jointscope::gui

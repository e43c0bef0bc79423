// Help menu: the user guide (docs/user-guide.md, compiled into the binary), the keyboard shortcuts of every
// action the window publishes, "Report a problem" (version and build facts on the clipboard) and About.
#pragma once

#include <QString>

class QMainWindow;
class QMenu;

namespace jointscope::gui {

// Fills `help` for `window`. Dialogs open non-modal: scripts and tests keep running while one is up.
void populateHelpMenu(QMenu* help, QMainWindow* window);

// The user guide's Markdown text as bundled in the binary.
QString userGuideMarkdown();
// Every action with a shortcut reachable from `window` (its menus first, in menu order, then the rest),
// as an HTML table: menu, action, shortcut. Generated at the moment it is shown, never written by hand.
QString shortcutsHtml(const QMainWindow* window);
// Version, Qt, platform, compiler and optional components, one "key: value" per line: what a bug report
// needs.
QString buildInfo();

} // namespace jointscope::gui

#include "tools/observe/dashboard_page.h"

#include "tools/observe/dashboard_page_bytes.inc"

namespace drk::observe {

std::string_view dashboard_page_html() { return {kDashboardPage, sizeof kDashboardPage - 1}; }

}  // namespace drk::observe

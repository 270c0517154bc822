// The dashboard's page (GET / of the dashboard service, dashboard_service.h): one self-contained
// HTML document, its scripts and styles inline, that reads /api/snapshot once and then follows
// /api/events (docs/dashboard.md). Nothing is fetched from the internet.
//
// Thread-safety: the text is a constant of the program.
#pragma once

#include <string_view>

namespace drk::observe {

std::string_view dashboard_page_html();

}  // namespace drk::observe

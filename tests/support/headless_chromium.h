// HeadlessChromium: Debian's Chromium (the `chromium` package), headless, driven by a test over
// the DevTools protocol on a pipe (--remote-debugging-pipe: commands on the browser's descriptor
// 3, answers and events on 4, each one JSON text ended by a NUL byte). A test opens a page,
// waits until a JavaScript condition holds in it, reads values from it and takes screenshots, in
// real time: pages that keep a connection open (server-sent events) work, which --dump-dom with
// --virtual-time-budget does not (virtual time waits for the stream to end).
//
// Bounded: every call waits at most its timeout, and a browser that does not answer is an error
// (Result), never a hang. The destructor closes the browser; one that does not end is killed with
// its process group (SpawnedProgram), and its profile directory is removed.
//
// Thread-safety: one thread. Errors: io_error when the browser cannot start or its pipe breaks,
// timeout, protocol_error for an answer that is an error (its message quoted).
#pragma once

#include <poll.h>
#include <unistd.h>

#include <boost/beast/core/detail/base64.hpp>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/json_text.h"
#include "base/result.h"
#include "base/temporary_directory.h"
#include "base/unique_fd.h"
#include "tests/support/spawned_program.h"

namespace drk::testing {

class HeadlessChromium {
 public:
  static constexpr const char* kPath = "/usr/bin/chromium";
  static constexpr std::chrono::seconds kCallTimeout{60};

  static bool installed() { return ::access(kPath, X_OK) == 0; }

  // A browser whose window is width x height pixels, with a fresh profile; its output goes to
  // `log_path`.
  static Result<std::unique_ptr<HeadlessChromium>> start(int width, int height, const std::string& log_path) {
    // A browser that died leaves its command pipe without a reader: a write is then an error, not
    // the signal that would end the test.
    std::signal(SIGPIPE, SIG_IGN);
    auto profile = TemporaryDirectory::create("drk-chromium");
    if (!profile) return profile.error();
    auto commands = open_pipe("commands to Chromium");
    if (!commands) return commands.error();
    auto answers = open_pipe("answers from Chromium");
    if (!answers) return answers.error();
    std::unique_ptr<HeadlessChromium> browser(new HeadlessChromium());
    browser->profile_ = std::move(*profile);
    browser->program_ = std::make_unique<SpawnedProgram>(
        std::vector<std::string>{kPath, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                                 "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + browser->profile_.path(),
                                 "--window-size=" + std::to_string(width) + "," + std::to_string(height),
                                 "about:blank"},
        log_path, std::vector<int>{commands->read.get(), answers->write.get()});
    browser->commands_ = std::move(commands->write);
    browser->answers_ = std::move(answers->read);
    return browser;
  }

  ~HeadlessChromium() {
    if (program_ && program_->running() && send("Browser.close", Json::object(), false)) {
      (void)answer(last_id_, std::chrono::seconds(10));
      program_->wait_for(10'000);
    }
  }
  HeadlessChromium(const HeadlessChromium&) = delete;
  HeadlessChromium& operator=(const HeadlessChromium&) = delete;

  // Opens `url` in a new tab, which the other calls then act on.
  Status open(const std::string& url) {
    auto target = call("Target.createTarget", {{"url", url}}, false);
    if (!target) return target.error();
    auto session = call("Target.attachToTarget", {{"targetId", (*target)["targetId"]}, {"flatten", true}}, false);
    if (!session) return session.error();
    session_ = (*session)["sessionId"].get<std::string>();
    return {};
  }

  // The value of a JavaScript expression in the page (a promise's, once it settles), as JSON; an
  // exception the expression throws is a protocol_error quoting it.
  Result<Json> evaluate(const std::string& expression) {
    auto result = call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}, {"awaitPromise", true}});
    if (!result) return result.error();
    if (result->contains("exceptionDetails")) {
      return make_error(Errc::protocol_error, "the page threw on `" + expression + "`: " +
                                                  json_text((*result)["exceptionDetails"]));
    }
    const Json& value = (*result)["result"];
    return value.contains("value") ? value["value"] : Json();
  }

  // Waits until `condition`, a JavaScript expression, is true in the page; while the page loads
  // the condition may throw (no <body> yet), which counts as false. A timeout error after
  // `timeout` names the condition and what it last threw.
  Status wait_until(const std::string& condition, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string thrown;
    while (true) {
      auto value = evaluate("Boolean(" + condition + ")");
      if (!value && value.error().code != Errc::protocol_error) return value.error();
      if (value && *value == true) return {};
      if (!value) thrown = value.error().message;
      if (std::chrono::steady_clock::now() >= deadline) {
        return make_error(Errc::timeout, "the page did not reach `" + condition + "` within " +
                                             std::to_string(timeout.count()) + " ms" +
                                             (thrown.empty() ? "" : "; it last threw: " + thrown));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // The whole page (beyond the window where it is longer) as PNG bytes.
  Result<std::string> screenshot_png() {
    auto shot = call("Page.captureScreenshot", {{"format", "png"}, {"captureBeyondViewport", true}});
    if (!shot) return shot.error();
    const std::string encoded = (*shot)["data"].get<std::string>();
    std::string png(boost::beast::detail::base64::decoded_size(encoded.size()), '\0');
    png.resize(boost::beast::detail::base64::decode(png.data(), encoded.data(), encoded.size()).first);
    return png;
  }

 private:
  HeadlessChromium() = default;

  // Sends one command (to the open tab when `in_page`) and returns its answer's result.
  Result<Json> call(const std::string& method, Json params, bool in_page = true) {
    if (!send(method, std::move(params), in_page)) {
      return make_error(Errc::io_error, "Chromium's command pipe is closed (" + method + "): see its log");
    }
    auto reply = answer(last_id_, kCallTimeout);
    if (!reply) return reply.error();
    if (reply->contains("error")) {
      return make_error(Errc::protocol_error, method + " failed: " + json_text((*reply)["error"]));
    }
    return (*reply)["result"];
  }

  bool send(const std::string& method, Json params, bool in_page) {
    Json command = {{"id", ++last_id_}, {"method", method}, {"params", std::move(params)}};
    if (in_page) command["sessionId"] = session_;
    const std::string text = json_text(command) + '\0';
    for (size_t written = 0; written < text.size();) {
      const ssize_t n = ::write(commands_.get(), text.data() + written, text.size() - written);
      if (n <= 0) return false;
      written += static_cast<size_t>(n);
    }
    return true;
  }

  // The answer to command `id`; events and other answers read on the way are dropped.
  Result<Json> answer(int id, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      for (size_t end = pending_.find('\0'); end != std::string::npos; end = pending_.find('\0')) {
        Json message = Json::parse(pending_.substr(0, end), nullptr, false);
        pending_.erase(0, end + 1);
        if (message.is_object() && message.value("id", -1) == id) return message;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd readable{answers_.get(), POLLIN, 0};
      if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) != 1) {
        return make_error(Errc::timeout, "Chromium did not answer command " + std::to_string(id) + " within " +
                                             std::to_string(timeout.count()) + " ms");
      }
      char buffer[1 << 16];
      const ssize_t n = ::read(answers_.get(), buffer, sizeof buffer);
      if (n <= 0) return make_error(Errc::io_error, "Chromium closed its answer pipe: see its log");
      pending_.append(buffer, static_cast<size_t>(n));
    }
  }

  TemporaryDirectory profile_;
  std::unique_ptr<SpawnedProgram> program_;  // after profile_: the browser ends before its profile goes
  UniqueFd commands_, answers_;
  std::string pending_;  // bytes read after the last whole message
  std::string session_;
  int last_id_ = 0;
};

}  // namespace drk::testing

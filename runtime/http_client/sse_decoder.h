// SseDecoder: the events of a server-sent event stream (text/event-stream), fed in pieces as they
// arrive (a piece may end anywhere, even inside a line). An event is its `data:` lines joined by
// "\n", delivered at the blank line that ends it; comments (":") and other fields (event, id,
// retry) are skipped. Lines end with "\n", "\r\n" or "\r".
// Thread-safety: one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drk::http_client {

class SseDecoder {
 public:
  // The data of each event that `piece` completes, in order.
  std::vector<std::string> feed(std::string_view piece);
  // The data of an event the stream ended inside of (no blank line after it); empty when none.
  std::string finish();

 private:
  void take_line(std::string_view line, std::vector<std::string>& events);

  std::string line_;
  std::string data_;
  bool has_data_ = false;
  bool after_cr_ = false;
};

}  // namespace drk::http_client

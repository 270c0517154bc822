#include "runtime/http_client/sse_decoder.h"

namespace drk::http_client {

std::vector<std::string> SseDecoder::feed(std::string_view piece) {
  std::vector<std::string> events;
  for (const char c : piece) {
    if (c == '\n' && after_cr_) {
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      take_line(line_, events);
      line_.clear();
    } else {
      line_.push_back(c);
    }
  }
  return events;
}

std::string SseDecoder::finish() {
  std::vector<std::string> events;
  if (!line_.empty()) take_line(line_, events);
  line_.clear();
  if (has_data_) take_line("", events);
  return events.empty() ? std::string() : events.front();
}

void SseDecoder::take_line(std::string_view line, std::vector<std::string>& events) {
  if (line.empty()) {
    if (has_data_) events.push_back(std::move(data_));
    data_.clear();
    has_data_ = false;
    return;
  }
  if (line.front() == ':') return;
  const size_t colon = line.find(':');
  const std::string_view field = line.substr(0, colon);
  if (field != "data") return;
  std::string_view value = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (has_data_) data_.push_back('\n');
  data_.append(value);
  has_data_ = true;
}

}  // namespace drk::http_client

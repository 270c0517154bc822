// ChatMessage: one message of a conversation with a language model, as OpenAI's chat API has it
// (role "system", "user" or "assistant"). A trajectory's conversation is a list of them.
#pragma once

#include <string>
#include <vector>

namespace drk::generator {

struct ChatMessage {
  std::string role;
  std::string content;
};

using Conversation = std::vector<ChatMessage>;

}  // namespace drk::generator

// Boost.Beast behind our seam (Debian's Boost, which cpprestsdk already pulls in). It replaced
// cpprestsdk's listener, archived upstream and never meant for production (docs/performance.md):
// that one has no timeouts, reads bodies it will refuse, and writes a reply 4 KB a send with a
// thread handoff each. Here a reply leaves in one gather write, limits are checked on the header
// before a body byte is read, and a client that dribbles is cut off.
#include <sys/resource.h>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <latch>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "api/error_body.h"
#include "api/http_server.h"
#include "api/request_target.h"
#include "services/log.h"
#include "services/span_trace.h"
#include "services/thread_name.h"

namespace trainyard::api {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// asio's pool starts its threads itself. As many tasks as threads, each waiting until all have
// named their thread, must run one a thread.
void NameEachThread(asio::thread_pool& pool, size_t threads, std::string_view name) {
  auto all_named = std::make_shared<std::latch>(static_cast<std::ptrdiff_t>(threads) + 1);
  for (size_t i = 0; i < threads; ++i) {
    asio::post(pool, [all_named, name] {
      NameThisThread(name);
      all_named->arrive_and_wait();
    });
  }
  all_named->arrive_and_wait();
}

// Boost 1.74's Beast speaks boost::string_view.
std::string_view View(beast::string_view s) { return {s.data(), s.size()}; }

std::string Lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Requests between their header read and their reply written: a drain waits for none to be left.
struct RequestsInFlight {
  std::mutex mu;
  std::condition_variable idle;
  int count = 0;
};

// Connections open now, against ServerOptions::max_connections.
struct OpenConnections {
  std::mutex mu;
  int count = 0;
  // Set while the acceptor waits at the cap; the first connection to close calls it (once).
  std::function<void()> resume_accept;
};

// What every connection shares with the server; held by each connection, so a connection that
// outlives Stop never reads a destroyed server.
struct ServerState {
  ServerOptions options;
  Handler handler;
  // Where writes' handlers run (they wait for a commit); reads run on the I/O thread that read
  // them. Set while the server runs.
  asio::thread_pool* writers = nullptr;
  std::atomic<bool> draining{false};
  RequestsInFlight in_flight;
  OpenConnections open;
};

// One connection counted open from its accept until it is gone, its socket closed; the first to
// go from a full server lets the acceptor take the next.
class ConnectionSlot {
 public:
  explicit ConnectionSlot(OpenConnections& open) : open_(open) {
    std::lock_guard lock(open_.mu);
    ++open_.count;
  }
  ~ConnectionSlot() {
    std::function<void()> resume;
    {
      std::lock_guard lock(open_.mu);
      --open_.count;
      resume.swap(open_.resume_accept);
    }
    if (resume) resume();
  }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

 private:
  OpenConnections& open_;
};

// One request counted in flight, from its header to its reply on the wire (or the client gone).
class InFlightToken {
 public:
  explicit InFlightToken(RequestsInFlight& r) : r_(r) {
    std::lock_guard lock(r_.mu);
    ++r_.count;
  }
  ~InFlightToken() {
    std::lock_guard lock(r_.mu);
    if (--r_.count == 0) r_.idle.notify_all();
  }
  InFlightToken(const InFlightToken&) = delete;
  InFlightToken& operator=(const InFlightToken&) = delete;

 private:
  RequestsInFlight& r_;
};

HttpResponse Refusal(Status status, int http_status) {
  HttpResponse out = ErrorResponse(std::move(status), "", http_status);
  out.close_connection = true;
  return out;
}

// A header that could not be parsed (not a client gone quiet or away): answered 400.
bool Malformed(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_target).category() &&
         ec != http::error::end_of_stream && ec != http::error::partial_message &&
         ec != http::error::need_more;
}

template <class Stream>
class Connection : public std::enable_shared_from_this<Connection<Stream>> {
 public:
  Connection(Stream stream, std::shared_ptr<ServerState> state)
      : state_(std::move(state)), slot_(state_->open), stream_(std::move(stream)) {}

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(state_->options.header_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Close();
                                self->WaitForRequest();
                              });
    } else {
      WaitForRequest();
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // Between requests a kept connection may sit idle for long; once a request's first byte is in,
  // its whole header must follow within the header timeout (what cuts a slowloris off).
  void WaitForRequest() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(state_->options.max_header_bytes));
    // Unbounded here: OnHeader refuses a Content-Length over the limit with a 413 before a body
    // byte is read, and chunked bodies (the only ones of no declared length) with a 411. Not
    // boost::none: Boost 1.74 compares a length with it as "greater" and refuses every body.
    parser_->body_limit(std::numeric_limits<uint64_t>::max());
    if (buffer_.size() > 0) return ReadHeader();
    Lowest().expires_after(state_->options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

  // Parses what the buffer already holds, here: a request mostly arrives whole in one read, and
  // async_read_header would cost it a trip through the io_context (often to another thread).
  // True once the header is done or malformed (ec says which); false while bytes are missing.
  bool ParseBuffered(beast::error_code& ec, bool body) {
    while (buffer_.size() > 0 && !(body ? parser_->is_done() : parser_->is_header_done())) {
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (ec == http::error::need_more) {
        ec = {};
        return false;
      }
      if (ec) return true;
    }
    return body ? parser_->is_done() : parser_->is_header_done();
  }

  void ReadHeader() {
    beast::error_code ec;
    if (ParseBuffered(ec, /*body=*/false)) return OnHeader(ec);
    Lowest().expires_after(state_->options.header_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    const ServerOptions& options = state_->options;
    if (ec == http::error::header_limit) {
      return Reply(Refusal(
          Status(Code::kInvalidArgument, "request headers exceed the limit of " +
                                             std::to_string(options.max_header_bytes) + " bytes"),
          431));
    }
    if (Malformed(ec)) {
      return Reply(Refusal(InvalidArgument("malformed HTTP request: " + ec.message()), 400));
    }
    if (ec) return Close();  // timed out, reset or closed between requests: nothing to answer
    in_flight_.emplace(state_->in_flight);
    version_ = parser_->get().version();
    if (state_->draining) {
      return Reply(Refusal(Unavailable("the server is shutting down"), 503));
    }
    const auto& header = parser_->get();
    if (parser_->chunked()) {
      return Reply(Refusal(
          InvalidArgument("chunked request bodies are not accepted; send a Content-Length"), 411));
    }
    if (auto length = parser_->content_length(); length && *length > options.max_body_bytes) {
      // Answered before the body is read: the client stops sending and the connection closes.
      return Reply(Refusal(
          Status(Code::kInvalidArgument, "request body of " + std::to_string(*length) +
                                             " bytes exceeds the limit of " +
                                             std::to_string(options.max_body_bytes) + " bytes"),
          413));
    }
    if (parser_->is_done()) return Handle();
    auto expect = header.find(http::field::expect);
    if (expect != header.end() && beast::iequals(expect->value(), "100-continue")) {
      // curl waits a second for this before sending a body of 1 MB or more.
      continue_.emplace(http::status::continue_, header.version());
      Lowest().expires_after(options.write_timeout);
      return http::async_write(stream_, *continue_,
                               [self = this->shared_from_this()](beast::error_code ec, size_t) {
                                 if (ec) return self->Close();
                                 self->ReadBody();
                               });
    }
    ReadBody();
  }

  void ReadBody() {
    parser_->eager(true);  // what of the body is buffered, parsed in one put
    beast::error_code ec;
    if (ParseBuffered(ec, /*body=*/true)) return ec ? Close() : Handle();
    Lowest().expires_after(state_->options.body_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Close();
                       self->Handle();
                     });
  }

  // A read's handler runs on this I/O thread (no handoff: most are answered from memory); a
  // write's on the writers' pool, whose threads may wait for their commit (ServerOptions).
  void Handle() {
    auto message = parser_->release();
    HttpRequest request;
    request.method = std::string(message.method_string());
    if (!ParseRequestTarget(View(message.target()), request)) {
      return Reply(Refusal(InvalidArgument("malformed request URI"), 400));
    }
    for (const auto& field : message) {
      std::string name = Lowercase(View(field.name_string()));
      auto [it, fresh] = request.headers.try_emplace(std::move(name), View(field.value()));
      if (!fresh) it->second.append(", ").append(View(field.value()));  // one list, RFC 9110 §5.3
    }
    request.body = std::move(message.body());
    keep_alive_ = message.keep_alive();
    version_ = message.version();
    if (!WaitsForACommit(request.method) || state_->writers == nullptr) {
      return Reply(Run(request));
    }
    // Back on this connection's strand with the reply, once the handler has its commit. Counted
    // from here (queued for a writer counts too) until the handler returns; not a `:wait`, which
    // holds its thread for an operation to end, not for the database.
    RequestGauge* gauge =
        request.path.ends_with(":wait") ? nullptr : state_->options.writes_in_flight;
    if (gauge != nullptr) gauge->Enter();
    if (SpanTraceOn()) write_received_ = std::chrono::system_clock::now();
    asio::post(*state_->writers,
               [self = this->shared_from_this(), request = std::move(request), gauge]() mutable {
                 HttpResponse out;
                 {
                   SpanTimer handler(-2, 0, "handler");
                   out = self->Run(request);
                 }
                 if (gauge != nullptr) gauge->Leave();
                 asio::post(self->stream_.get_executor(), [self, out = std::move(out)]() mutable {
                   self->Reply(std::move(out));
                 });
               });
  }

  // A read (GET, HEAD) is mostly answered from memory, else by one query; a write waits for its
  // transaction's commit (a create for its group commit, :wait for an operation to end).
  static bool WaitsForACommit(const std::string& method) {
    return method != "GET" && method != "HEAD";
  }

  HttpResponse Run(HttpRequest& request) {
    try {
      return state_->handler(request);
    } catch (const std::exception& e) {
      return ErrorResponse(Internal(std::string("the request failed: ") + e.what()),
                           request.request_id);
    }
  }

  void Reply(HttpResponse out) {
    response_.emplace(static_cast<http::status>(out.status), version_);
    for (auto& [name, value] : out.headers) response_->insert(name, value);
    response_->set(http::field::content_type, out.content_type);
    response_->body() = std::move(out.body);
    response_->keep_alive(keep_alive_ && !out.close_connection && !state_->draining);
    response_->prepare_payload();
    Lowest().expires_after(state_->options.write_timeout);
    http::async_write(
        stream_, *response_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
          if (self->write_received_) {
            TraceSpan(*self->write_received_, std::chrono::system_clock::now(), -1, 0, "request");
            self->write_received_.reset();
          }
          bool keep = !ec && self->response_->keep_alive();
          self->response_.reset();
          self->in_flight_.reset();
          if (!keep) return self->Close();
          self->keep_alive_ = true;
          self->version_ = 11;
          self->WaitForRequest();
        });
  }

  // Stops sending, then reads and drops what the client still sends for a moment: closing with
  // unread bytes would reset the connection and the client might lose our reply (nginx's
  // lingering close).
  void Close() {
    in_flight_.reset();
    beast::error_code ignored;
    if constexpr (kTls) {
      Lowest().expires_after(std::chrono::seconds(1));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        self->Lowest().socket().close(ignored);
      });
    } else {
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      Linger();
    }
  }

  void Linger() {
    Lowest().expires_after(std::chrono::seconds(1));
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(16 << 10),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->lingered_ += n;
                              if (ec || self->lingered_ > (4u << 20)) {
                                beast::error_code ignored;
                                self->Lowest().socket().close(ignored);
                                return;
                              }
                              self->Linger();
                            });
  }

  // In this order, so the socket closes before the slot is given back, and the slot before the
  // state it counts in.
  std::shared_ptr<ServerState> state_;
  ConnectionSlot slot_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<http::response<http::empty_body>> continue_;
  std::optional<http::response<http::string_body>> response_;
  std::optional<InFlightToken> in_flight_;
  // When a write request was read, while TRAINYARD_SPAN_TRACE is on (services/span_trace.h).
  std::optional<std::chrono::system_clock::time_point> write_received_;
  bool keep_alive_ = false;  // until a request says otherwise, an early refusal closes
  unsigned version_ = 11;
  size_t lingered_ = 0;
};

class BeastServer final : public HttpServer {
 public:
  BeastServer(ServerOptions options, Handler handler) : state_(std::make_shared<ServerState>()) {
    state_->options = std::move(options);
    state_->handler = std::move(handler);
  }

  ~BeastServer() override { Stop(std::chrono::milliseconds(0)); }

  Status Start() override {
    const ServerOptions& options = state_->options;
    if (!options.tls_cert_file.empty()) {
      // Read now, so a bad file stops start-up with its name instead of failing each handshake.
      tls_.emplace(ssl::context::tls_server);
      try {
        tls_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                          ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                          ssl::context::no_tlsv1_1 | ssl::context::no_compression |
                          ssl::context::single_dh_use);
        tls_->use_certificate_chain_file(options.tls_cert_file);
        tls_->use_private_key_file(options.tls_key_file, ssl::context::pem);
      } catch (const std::exception& e) {
        tls_.reset();
        return InvalidArgument("cannot use the TLS certificate " + options.tls_cert_file +
                               " with the key " + options.tls_key_file + ": " + e.what());
      }
    }
    beast::error_code ec;
    auto address =
        asio::ip::make_address(options.host == "localhost" ? "127.0.0.1" : options.host, ec);
    tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
    if (!ec) acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return Unavailable("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                         ": " + ec.message());
    }
    WarnIfDescriptorsRunOutFirst(options.max_connections);
    const auto writers = static_cast<size_t>(std::max(1, options.threads));
    writers_.emplace(writers);
    NameEachThread(*writers_, writers, "ty-write");
    state_->writers = &*writers_;
    asio::post(acceptor_.get_executor(), [this] { Accept(); });
    int io_threads = std::max(1, options.io_threads);
    for (int i = 0; i < io_threads; ++i) {
      threads_.emplace_back([this] {
        NameThisThread("ty-http");
        io_.run();
      });
    }
    return Status::Ok();
  }

  void Stop(std::chrono::milliseconds drain) override {
    if (stopped_.exchange(true)) return;
    state_->draining = true;
    if (!threads_.empty()) {
      std::promise<void> closed;
      asio::post(acceptor_.get_executor(), [&] {
        beast::error_code ignored;
        acceptor_.close(ignored);
        accept_retry_.cancel();
        closed.set_value();
      });
      closed.get_future().wait();
      {
        std::lock_guard lock(state_->open.mu);
        state_->open.resume_accept = nullptr;  // a connection closing from now on resumes nothing
      }
      {
        std::unique_lock lock(state_->in_flight.mu);
        state_->in_flight.idle.wait_for(lock, drain,
                                        [this] { return state_->in_flight.count == 0; });
      }
      keep_running_.reset();
      io_.stop();
      for (auto& t : threads_) t.join();
      threads_.clear();
    }
    if (writers_) {
      writers_->stop();
      writers_->join();
    }
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

  int InFlight() const override {
    std::lock_guard lock(state_->in_flight.mu);
    return state_->in_flight.count;
  }

 private:
  // After a failed accept, the wait before the next: doubling from the first to the last.
  static constexpr std::chrono::milliseconds kFirstAcceptRetry{5};
  static constexpr std::chrono::milliseconds kLastAcceptRetry{1000};

  // One accept pending at a time, on the acceptor's strand (where Stop closes it too).
  void Accept() {
    if (!acceptor_.is_open() || AtTheCap()) return;
    acceptor_.async_accept(asio::make_strand(io_),
                           [this](beast::error_code ec, tcp::socket socket) {
                             if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
                               return;
                             }
                             if (ec) return AcceptFailed(ec);
                             accept_retry_delay_ = {};
                             Serve(std::move(socket));
                             Accept();
                           });
  }

  // At the cap, the acceptor waits for a connection to close rather than accept and close at
  // once: a newcomer waits in the kernel's backlog and is served late, where a reset would be an
  // error that clients retry at once and a proxy counts against this upstream.
  bool AtTheCap() {
    std::lock_guard lock(state_->open.mu);
    if (state_->open.count < std::max(1, state_->options.max_connections)) return false;
    state_->open.resume_accept = [this] {
      asio::post(acceptor_.get_executor(), [this] { Accept(); });
    };
    if (auto now = std::chrono::steady_clock::now(); now >= next_cap_warning_) {
      next_cap_warning_ = now + std::chrono::minutes(1);  // a full server says so once a minute
      LogJson(LogLevel::kWarn, "connection_cap_reached",
              {{"max_connections", state_->options.max_connections}});
    }
    return true;
  }

  // Out of descriptors (EMFILE, ENFILE) or memory, the connection stays in the backlog and its
  // accept would fail again at once, a core spinning on it: wait, longer each time, and try again.
  void AcceptFailed(const beast::error_code& ec) {
    accept_retry_delay_ = accept_retry_delay_.count() == 0
                              ? kFirstAcceptRetry
                              : std::min(2 * accept_retry_delay_, kLastAcceptRetry);
    LogJson(
        LogLevel::kWarn, "accept_failed",
        {{"error", ec.message()}, {"retry_ms", static_cast<int64_t>(accept_retry_delay_.count())}});
    accept_retry_.expires_after(accept_retry_delay_);
    accept_retry_.async_wait([this](beast::error_code ec) {
      if (!ec) Accept();
    });
  }

  void Serve(tcp::socket socket) {
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    beast::tcp_stream stream(std::move(socket));
    if (tls_) {
      std::make_shared<Connection<beast::ssl_stream<beast::tcp_stream>>>(
          beast::ssl_stream<beast::tcp_stream>(std::move(stream), *tls_), state_)
          ->Start();
    } else {
      std::make_shared<Connection<beast::tcp_stream>>(std::move(stream), state_)->Start();
    }
  }

  // Each connection holds a descriptor: a cap above the process's limit is never reached, the
  // accepts fail first, and the database's connections and the replicas' files fail with them.
  static void WarnIfDescriptorsRunOutFirst(int max_connections) {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
    if (static_cast<rlim_t>(max_connections) < limit.rlim_cur) return;
    LogJson(LogLevel::kWarn, "connection_cap_above_descriptor_limit",
            {{"max_connections", max_connections},
             {"open_files_limit", static_cast<int64_t>(limit.rlim_cur)},
             {"hint",
              "raise the open files limit (ulimit -n, LimitNOFILE=) or lower "
              "--max-connections"}});
  }

  std::shared_ptr<ServerState> state_;
  std::optional<ssl::context> tls_;
  // Destroyed before the TLS context and after the acceptor: its pending handlers own the
  // connections, which read both.
  asio::io_context io_;
  // Keeps the I/O threads running while nothing is pending on them: once the listener closes, a
  // write whose handler is still on the writers' pool has no operation on the io_context, and
  // without this its reply would be posted to threads that had returned.
  asio::executor_work_guard<asio::io_context::executor_type> keep_running_{io_.get_executor()};
  // Its handlers, and the retry timer's, run one at a time on this strand.
  tcp::acceptor acceptor_{asio::make_strand(io_)};
  asio::steady_timer accept_retry_{acceptor_.get_executor()};
  std::chrono::milliseconds accept_retry_delay_{0};  // none: the last accept succeeded
  std::chrono::steady_clock::time_point next_cap_warning_;
  std::optional<asio::thread_pool> writers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
};

}  // namespace

std::unique_ptr<HttpServer> NewHttpServer(ServerOptions options, Handler handler) {
  return std::make_unique<BeastServer>(std::move(options), std::move(handler));
}

}  // namespace trainyard::api

// The heartbeat backend's protocol engine for one process, sans-IO: every communicator known to repair,
// its agreement instances (repair/agreement.hpp) and its revocation, fed with failure notices and wire
// messages, emitting wire messages. The MPI adapter (repair/mpi_only.cpp) moves the bytes on a private
// communicator and serialises access with a mutex; unit tests connect several engines in one process.
//
// Ranks named `world` are MPI_COMM_WORLD ranks; `member` means a rank of the communicator concerned.
// Messages carry (communicator id, instance number): the id is agreed by all members without
// communication (repair/mpi_only.cpp derives it), and instance k is the k-th agreement that the members
// start on that communicator (collectives run in the same order everywhere). Messages for an instance or
// a communicator this process has not reached yet are kept until it does. Decided instances keep
// answering late peers (the last kKeepDecided of each communicator).
//
// Not thread-safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "repair/agreement.hpp"

namespace cohort::repair {

/// One message between engines, as bytes on the wire (native byte order: all ranks run on one kind of
/// machine). Layout: kind u8, 3 pad bytes, flag i32, comm id u64, instance u64, count u32, then count
/// i32 members.
struct Wire {
  enum Kind : std::uint8_t { kAgree = 1, kRevoke = 2 };
  Kind kind = kAgree;
  std::uint64_t comm = 0;
  std::uint64_t instance = 0;  ///< kAgree only
  int origin = -1;             ///< kRevoke: world rank that revoked
  AgreeMsg msg;                ///< kAgree only
};
std::vector<char> encode(const Wire &w);
/// False if the bytes are not a well-formed message (it is then dropped).
bool decode(const char *data, std::size_t len, Wire *out);
/// Bytes of the largest message for a communicator of `members` ranks.
std::size_t max_wire_size(int members);

class Engine {
 public:
  static constexpr std::size_t kKeepDecided = 4;
  static constexpr std::size_t kMaxEarly = 4096;  ///< messages kept for communicators not added yet

  /// `radix`: the agreement tree's fan-in (repair/agreement.hpp), the same on every rank.
  explicit Engine(int world_rank, int radix = kDefaultRadix) : me_(world_rank), radix_(radix) {}

  /// Adds a communicator: `world_ranks[i]` is the world rank of its member i. `id` must be the same on
  /// every member and not in use here. Replays messages that arrived for it earlier.
  void add_comm(std::uint64_t id, std::vector<int> world_ranks);
  /// Forgets a communicator; later messages for it are dropped.
  void remove_comm(std::uint64_t id);
  bool has_comm(std::uint64_t id) const { return comms_.count(id) != 0; }
  /// This process's rank in the communicator, -1 if not a member or unknown.
  int member_rank(std::uint64_t id) const;

  /// Starts this member's next agreement instance on comm `id` with input `flag`; returns its number.
  std::uint64_t start_agree(std::uint64_t id, int flag);
  /// True once instance `inst` of comm `id` has decided; fills the decision (failed: sorted members).
  bool decision(std::uint64_t id, std::uint64_t inst, int *flag, RankSet *failed) const;

  /// Marks comm `id` revoked here and sends a notice to every member not known dead. A member that
  /// learns the revoking rank died before everyone may have heard re-sends the notice to all members.
  void revoke(std::uint64_t id);
  bool revoked(std::uint64_t id) const;

  /// The local detector reports world rank `world` dead.
  void on_failure(int world);
  /// The local detector reports that world rank `world` left (MPI_Finalize). It will never answer again,
  /// so every agreement leaves it out as it leaves out a dead member (it is in the views and in the
  /// decided failed sets, and is_failed is true for it); it is never reported as learned
  /// (take_learned) and never fences anyone. Sound because a rank leaves only after MPI_Finalize's
  /// survivors barrier completed there: every live member entered that barrier, so no survivor can still
  /// need the departed rank's input, only its answers, which the others' decisions replace.
  void on_left(int world);
  /// A wire message from world rank `from`.
  void on_receive(int from, const char *data, std::size_t len);

  struct Send {
    int to;  ///< world rank
    std::vector<char> bytes;
  };
  std::vector<Send> take_sends();
  /// World ranks learned dead from messages since the last call (tell the detector).
  std::vector<int> take_learned();
  /// Another rank considers this one dead: the process must exit (self-fencing).
  bool fenced() const { return fenced_; }
  bool is_failed(int world) const { return failed_.count(world) != 0; }

 private:
  struct Instance {
    std::unique_ptr<Agreement> agreement;
  };
  struct Comm {
    std::vector<int> world;                  // member -> world rank
    std::unordered_map<int, int> member_of;  // world rank -> member
    int me = -1;
    std::uint64_t next = 1;                  // number of the next instance this member starts
    std::map<std::uint64_t, Instance> instances;
    std::map<std::uint64_t, std::vector<std::pair<int, AgreeMsg>>> early;  // by instance, (member, msg)
    bool revoked = false;
    std::set<int> revokers;                  // world ranks whose notice reached us (or ourselves)
  };
  struct Early {
    int from;
    std::vector<char> bytes;
  };

  void deliver(std::uint64_t id, Comm &c, std::uint64_t inst, int member, const AgreeMsg &msg);
  void collect(std::uint64_t id, Comm &c, Agreement &a, std::uint64_t inst);
  void retire(Comm &c);
  void notify_revoke(std::uint64_t id, Comm &c);
  void learn(int world);
  void drain();

  int me_, radix_;
  std::unordered_map<std::uint64_t, Comm> comms_;
  std::set<std::uint64_t> removed_;
  std::deque<std::pair<std::uint64_t, Early>> early_comm_;  // messages for comms not added yet
  std::set<int> failed_;  // dead or departed
  std::set<int> left_;    // departed
  std::deque<int> pending_failures_;  // learned from messages, applied after the current delivery
  std::vector<Send> sends_;
  std::vector<int> learned_;
  bool fenced_ = false;
};

}  // namespace cohort::repair

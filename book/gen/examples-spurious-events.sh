# `spurious-events`: a readable event with no data, and two readers woken
# for one message. The narration has nothing that varies.
target/debug/spurious-events

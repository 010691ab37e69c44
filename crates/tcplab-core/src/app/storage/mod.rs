//! Storage for study 002 (the Data Reservoir, issue 34): pure models the storage applications
//! drive through their one timer. `geometry`: zones, rotation and the seek curve of a disk;
//! `disk`: one disk with its FIFO queue, cache and read-ahead (defaults: a 10,000 rpm Ultra160
//! 73 GB disk of 2002, `scenarios/p2_data_reservoir/EVIDENCE.md` §2); `bus`: the shared SCSI bus and a host's set of
//! disks on it; `stripe`: hierarchical `i×j×k` striping of a file over disk servers and disks;
//! `iscsi`: RFC 3720's PDUs, transfer plans and initiator/target state machines over records;
//! `volume`: a disk server's share over its disks, as tasks; `outbox`: a session's PDUs in
//! order; `page_cache`: a Linux 2.4 host's page cache over one file on one disk (read-ahead,
//! bdflush/kupdate write-back); the applications `DiskTarget` (a disk server answering iSCSI) and `BlockInitiator`
//! (a file server reading, or a source disk server writing to its peer).

pub mod block_initiator;
pub mod bus;
pub mod disk;
pub mod disk_target;
pub mod geometry;
pub mod iscsi;
pub mod outbox;
pub mod page_cache;
pub mod stripe;
pub mod volume;

pub use block_initiator::BlockInitiator;
pub use disk_target::DiskTarget;

//! Canyon's scalability lab (being written; see issue 3).

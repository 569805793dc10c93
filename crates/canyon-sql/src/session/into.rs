//! SELECT ... INTO: the query has run (`Session::run_inner`, every plan and
//! privilege check of a SELECT); its result goes to user variables here
//! instead of to the client (`crate::parse::into` parsed the target).
//!
//! MySQL 8's rules for `INTO @a, @b`: the select list has as many columns
//! as there are variables (1222 otherwise), the query gives at most one row
//! (1172 "Result consisted of more than one row"; no variable changes), and
//! no row leaves the variables as they were with warning 1329. The client
//! gets an OK packet counting the rows (1 or 0).

use super::state::*;
use crate::parse::into::IntoTarget;
use crate::types::result::QueryResult;
use canyon_common::{Error, Result};

impl Session {
    /// Sends `result` (the query's rows) where `into` says.
    pub(super) fn select_into(
        &mut self,
        result: QueryResult,
        into: &IntoTarget,
    ) -> Result<QueryResult> {
        let QueryResult::Rows { columns, rows, .. } = result else {
            return Err(Error::Internal(
                "SELECT ... INTO without a result set".into(),
            ));
        };
        match into {
            IntoTarget::Vars(vars) => {
                if columns.len() != vars.len() {
                    return Err(Error::Sql {
                        code: 1222,
                        sqlstate: *b"21000",
                        message: "The used SELECT statements have a different number of columns"
                            .into(),
                    });
                }
                let mut rows = rows.into_iter();
                let Some(row) = rows.next() else {
                    self.warning(
                        1329,
                        "No data - zero rows fetched, selected, or processed".into(),
                    );
                    return Ok(ok(0));
                };
                if rows.next().is_some() {
                    return Err(Error::Sql {
                        code: 1172,
                        sqlstate: *b"42000",
                        message: "Result consisted of more than one row".into(),
                    });
                }
                for (name, value) in vars.iter().zip(row) {
                    self.state.user_vars.insert(name.clone(), value);
                }
                Ok(ok(1))
            }
            IntoTarget::Outfile { .. } => Err(Error::Unsupported("SELECT ... INTO OUTFILE".into())),
            IntoTarget::Dumpfile(_) => Err(Error::Unsupported("SELECT ... INTO DUMPFILE".into())),
        }
    }
}

//! Binding a call of a stored function: a name no builtin has, found among
//! the catalog's functions (in the current database, or the one that
//! qualifies it), binds to [`Expr::Stored`] with its arguments bound as any
//! expression. MySQL resolves builtins first, as here (`lookup` is asked
//! before this).

use crate::catalog::routines::{sp_error, RoutineKind};
use crate::expr::{Expr, StoredCall};
use crate::plan::bind::Binder;
use canyon_common::{Error, Result};
use sqlparser::ast;

impl Binder<'_> {
    /// The call `f` of a stored function, bound; `None` when no stored
    /// function has its name (the caller reports 1305 for an unknown
    /// function). A wrong argument count is 1318.
    #[inline(never)] // apart from the recursive binder's frame
    pub(crate) fn bind_stored_call(&mut self, f: &ast::Function) -> Result<Option<Expr>> {
        let Some(ctx) = self.plan_ctx else {
            return Ok(None);
        };
        let parts: Vec<&str> = f
            .name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.as_str()))
            .collect();
        let (db, name) = match parts.as_slice() {
            [n] => match ctx.db {
                Some(d) => (d, *n),
                None => return Ok(None),
            },
            [d, n] => (*d, *n),
            _ => return Ok(None),
        };
        let Some(routine) = ctx
            .catalog
            .routine(db, RoutineKind::Function, name)
            .cloned()
        else {
            return Ok(None);
        };
        let args: Vec<&ast::FunctionArg> = match &f.args {
            ast::FunctionArguments::None => Vec::new(),
            ast::FunctionArguments::List(l) => l.args.iter().collect(),
            ast::FunctionArguments::Subquery(_) => {
                return Err(Error::Unsupported("subqueries".into()))
            }
        };
        let expected = if routine.params.trim().is_empty() {
            0
        } else {
            crate::parse::psm::parse_params(&routine.params, RoutineKind::Function)?.len()
        };
        if expected != args.len() {
            // 1318 ER_SP_WRONG_NO_OF_ARGS.
            return Err(sp_error(
                1318,
                b"42000",
                format!(
                    "Incorrect number of arguments for FUNCTION {}.{}; expected {expected}, got {}",
                    routine.db,
                    routine.name,
                    args.len()
                ),
            ));
        }
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                    bound.push(self.bind(e)?)
                }
                _ => return Err(Error::Syntax(format!("{name}(...)"))),
            }
        }
        Ok(Some(Expr::Stored(Box::new(StoredCall {
            routine,
            args: bound,
        }))))
    }
}

//! Account statements: CREATE / ALTER / DROP USER, GRANT, REVOKE, SHOW GRANTS.

use super::state::*;
use crate::catalog::auth::AuthPlugin;
use crate::catalog::privileges::{Level, PrivSpec, Privs};
use crate::catalog::Catalog;
use crate::parse::GrantTarget;
use crate::parse::Parsed;
use crate::types::result::QueryResult;
use crate::types::value::Value;
use canyon_common::{Error, Result};
use std::sync::Arc;

impl Session {
    /// The level a GRANT / REVOKE names, with `*` and bare table names resolved
    /// against the current database (1046 without one).
    pub(super) fn grant_level(&self, target: &GrantTarget) -> Result<Level> {
        let current = || self.state.db.clone().ok_or(Error::NoDatabaseSelected);
        Ok(match target {
            GrantTarget::Global => Level::Global,
            GrantTarget::CurrentDb => Level::Db(current()?),
            GrantTarget::Db(d) => Level::Db(d.clone()),
            GrantTarget::Table(d, t) => Level::Table(
                match d {
                    Some(d) => d.clone(),
                    None => current()?,
                },
                t.clone(),
            ),
        })
    }

    /// MySQL's error for a GRANT the session may not give: 1044 at a database,
    /// 1142 at a table, 1227 globally.
    pub(super) fn grant_denied(&self, level: &Level) -> Error {
        match level {
            Level::Global => Error::SpecificAccessDenied("GRANT OPTION".into()),
            Level::Db(db) => Error::DbAccessDenied {
                user: self.state.user.clone(),
                host: self.state.host.clone(),
                db: db.clone(),
            },
            Level::Table(_, t) => Error::TableAccessDenied {
                command: "GRANT".into(),
                user: self.state.user.clone(),
                host: self.state.host.clone(),
                table: t.clone(),
            },
        }
    }
}

/// The plugin named in IDENTIFIED WITH; 1524 (ER_PLUGIN_IS_NOT_LOADED) for one
/// Canyon does not have.
pub(super) fn auth_plugin(name: Option<&str>) -> Result<Option<AuthPlugin>> {
    name.map(|n| AuthPlugin::from_name(n).ok_or_else(|| Error::PluginNotLoaded(n.to_string())))
        .transpose()
}

impl Session {
    /// Account statements (Canyon parses them itself: see `Parsed`).
    pub(super) fn run_account(
        &mut self,
        cat: &Arc<Catalog>,
        parsed: &Parsed,
    ) -> Result<QueryResult> {
        let engine = self.state.engine.clone();
        match parsed {
            Parsed::CreateUser {
                user,
                host,
                plugin,
                password,
                if_not_exists,
            } => {
                self.state.check_super(cat, "CREATE USER")?;
                let plugin = auth_plugin(plugin.as_deref())?.unwrap_or(AuthPlugin::NativePassword);
                self.commit()?;
                engine.create_user(user, host, plugin, password, *if_not_exists)?;
                Ok(ok(0))
            }
            Parsed::AlterUser {
                account,
                plugin,
                password,
                if_exists,
            } => {
                // Anyone may change their own password (SET PASSWORD, or ALTER
                // USER naming their own account); other accounts need CREATE USER.
                let own = self
                    .state
                    .account(cat)
                    .map(|u| (u.user.clone(), u.host.clone()));
                let (user, host) = match (account, &own) {
                    (Some(a), _) => a.clone(),
                    (None, Some(own)) => own.clone(),
                    (None, None) => return Err(Error::SpecificAccessDenied("SET PASSWORD".into())),
                };
                if own.as_ref() != Some(&(user.clone(), host.clone())) {
                    self.state.check_super(cat, "CREATE USER")?;
                }
                let plugin = auth_plugin(plugin.as_deref())?;
                self.commit()?;
                engine.alter_user_password(&user, &host, plugin, password, *if_exists)?;
                Ok(ok(0))
            }
            Parsed::Grant {
                privs,
                target,
                accounts,
                grant_option,
            } => {
                let level = self.grant_level(target)?;
                let privs = privs.at(&level);
                level.check_grantable(privs)?;
                let may = self
                    .state
                    .account(cat)
                    .is_some_and(|u| u.may_grant(&level, privs));
                if !may {
                    return Err(self.grant_denied(&level));
                }
                for (user, host) in accounts {
                    if !cat.users.contains_key(&(user.clone(), host.clone())) {
                        return Err(Error::NoSuchUser(format!("'{user}'@'{host}'")));
                    }
                }
                self.commit()?;
                for (user, host) in accounts {
                    engine.grant(user, host, &level, privs, *grant_option)?;
                }
                Ok(ok(0))
            }
            Parsed::Revoke {
                privs,
                target,
                accounts,
                grant_option,
            } => {
                let level = match target {
                    Some(t) => Some(self.grant_level(t)?),
                    None => None,
                };
                let may = self.state.account(cat).is_some_and(|u| match &level {
                    Some(l) => u.may_grant(l, privs.at(l)),
                    None => u.allows_global(Privs::CREATE_USER),
                });
                if !may {
                    return Err(match &level {
                        Some(l) => self.grant_denied(l),
                        None => Error::SpecificAccessDenied("CREATE USER".into()),
                    });
                }
                self.commit()?;
                for (user, host) in accounts {
                    match &level {
                        Some(l) => engine.revoke(user, host, l, privs.at(l), *grant_option)?,
                        None => {
                            // Every level the account holds grants at.
                            let def = cat
                                .users
                                .get(&(user.clone(), host.clone()))
                                .ok_or_else(|| Error::NoSuchUser(format!("'{user}'@'{host}'")))?;
                            for g in &def.grants {
                                let l = g.level();
                                engine.revoke(user, host, &l, PrivSpec::All.at(&l), true)?;
                            }
                        }
                    }
                }
                Ok(ok(0))
            }
            Parsed::ShowGrants { account } => {
                let def = match account {
                    None => self.state.account(cat),
                    Some((user, host)) => {
                        let own = self
                            .state
                            .account(cat)
                            .is_some_and(|u| (&u.user, &u.host) == (user, host));
                        let may = own
                            || self
                                .state
                                .account(cat)
                                .is_some_and(|u| u.allows_global(Privs::CREATE_USER));
                        if !may {
                            // MySQL: another account's grants need SELECT on
                            // the mysql system database (1044); Canyon has no
                            // such database and asks for CREATE USER instead.
                            return Err(Error::DbAccessDenied {
                                user: self.state.user.clone(),
                                host: self.state.host.clone(),
                                db: "mysql".into(),
                            });
                        }
                        Some(
                            cat.users
                                .get(&(user.clone(), host.clone()))
                                .cloned()
                                .ok_or_else(|| Error::NonexistingGrant {
                                    user: user.clone(),
                                    host: host.clone(),
                                })?,
                        )
                    }
                };
                let def = def.ok_or_else(|| Error::SpecificAccessDenied("SHOW GRANTS".into()))?;
                let rows = def
                    .show_grants()
                    .iter()
                    .map(|l| vec![Value::str(l)])
                    .collect();
                let title = format!("Grants for {}@{}", def.user, def.host);
                Ok(text_rows(&[title.as_str()], rows))
            }
            Parsed::DropUser {
                user,
                host,
                if_exists,
            } => {
                self.state.check_super(cat, "CREATE USER")?;
                self.commit()?;
                engine.drop_user(user, host, *if_exists)?;
                Ok(ok(0))
            }
            _ => Err(Error::Internal("not an account statement".into())),
        }
    }
}

//! Accounts: CREATE / ALTER / DROP USER, GRANT and REVOKE as catalog changes
//! through `Engine::change`, each persisted with a synced write and
//! published with one swap.

use crate::catalog::auth::{self, AuthPlugin};
use crate::catalog::engine::*;
use crate::catalog::privileges::{self, Level, Privs};
use crate::catalog::UserDef;
use canyon_common::{Error, Result};
use canyon_storage::Keyspace;
use std::sync::Arc;

pub(crate) fn user_key(user: &str, host: &str) -> Vec<u8> {
    let mut k = META_USER.to_vec();
    k.extend_from_slice(user.as_bytes());
    k.push(0);
    k.extend_from_slice(host.as_bytes());
    k
}

/// Sets `def`'s plugin and the one verifier that plugin checks.
pub(crate) fn set_password(def: &mut UserDef, plugin: AuthPlugin, password: &str) {
    def.plugin = plugin.name().to_string();
    def.native_hash_hex.clear();
    def.sha2_verifier.clear();
    if password.is_empty() {
        return;
    }
    match plugin {
        AuthPlugin::NativePassword => def.native_hash_hex = auth::hex(&auth::native_hash(password)),
        AuthPlugin::CachingSha2Password => def.sha2_verifier = auth::sha2_verifier(password),
    }
}

impl Engine {
    // ---- accounts ------------------------------------------------------------------

    /// CREATE USER. Returns false when it existed and IF NOT EXISTS was given.
    pub fn create_user(
        &self,
        user: &str,
        host: &str,
        plugin: AuthPlugin,
        password: &str,
        if_not_exists: bool,
    ) -> Result<bool> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            if cat.users.contains_key(&key) {
                return if if_not_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "CREATE USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            }
            let mut def = UserDef {
                user: user.to_string(),
                host: host.to_string(),
                native_hash_hex: String::new(),
                plugin: String::new(),
                sha2_verifier: String::new(),
                grants: Vec::new(),
            };
            set_password(&mut def, plugin, password);
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(true)
        })
    }

    /// ALTER USER ... IDENTIFIED [WITH plugin] BY 'pw': a new password, and the
    /// plugin (`None` keeps the account's). Returns false when the account does
    /// not exist and IF EXISTS was given.
    pub fn alter_user_password(
        &self,
        user: &str,
        host: &str,
        plugin: Option<AuthPlugin>,
        password: &str,
        if_exists: bool,
    ) -> Result<bool> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            let Some(old) = cat.users.get(&key) else {
                return if if_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "ALTER USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            };
            let mut def = UserDef::clone(old);
            let plugin = plugin
                .or_else(|| AuthPlugin::from_name(&def.plugin))
                .unwrap_or(AuthPlugin::NativePassword);
            set_password(&mut def, plugin, password);
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(true)
        })
    }

    /// DROP USER. Returns false when it did not exist and IF EXISTS was given.
    pub fn drop_user(&self, user: &str, host: &str, if_exists: bool) -> Result<bool> {
        self.change(|cat, _, batch| {
            if cat
                .users
                .remove(&(user.to_string(), host.to_string()))
                .is_none()
            {
                return if if_exists {
                    Ok(false)
                } else {
                    Err(Error::CannotUser {
                        operation: "DROP USER".into(),
                        user: format!("'{user}'@'{host}'"),
                    })
                };
            }
            batch.delete(Keyspace::Meta, user_key(user, host));
            Ok(true)
        })
    }

    /// GRANT: adds `privs` (and the GRANT OPTION) at `level` to the account;
    /// 1133 when it does not exist.
    pub fn grant(
        &self,
        user: &str,
        host: &str,
        level: &Level,
        privs: Privs,
        grant_option: bool,
    ) -> Result<()> {
        self.change_account(user, host, |def| {
            privileges::add_grant(def, level, privs, grant_option);
            Ok(())
        })
    }

    /// REVOKE: removes `privs` (and the GRANT OPTION when asked) at exactly
    /// `level`; 1141 when the account holds no grant there.
    pub fn revoke(
        &self,
        user: &str,
        host: &str,
        level: &Level,
        privs: Privs,
        grant_option: bool,
    ) -> Result<()> {
        self.change_account(user, host, |def| {
            privileges::remove_grant(def, level, privs, grant_option)
        })
    }

    /// Changes one existing account in a catalog change of its own.
    pub(crate) fn change_account(
        &self,
        user: &str,
        host: &str,
        edit: impl FnOnce(&mut UserDef) -> Result<()>,
    ) -> Result<()> {
        self.change(|cat, _, batch| {
            let key = (user.to_string(), host.to_string());
            let cur = cat
                .users
                .get(&key)
                .cloned()
                .ok_or_else(|| Error::NoSuchUser(format!("'{user}'@'{host}'")))?;
            let mut def = UserDef::clone(&cur);
            edit(&mut def)?;
            batch.put(Keyspace::Meta, user_key(user, host), json(&def)?);
            cat.users.insert(key, Arc::new(def));
            Ok(())
        })
    }
}

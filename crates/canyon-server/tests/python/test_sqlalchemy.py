"""SQLAlchemy 2 ORM with PyMySQL as the dialect's driver, against Canyon.

Covers the dialect's connect-time queries, MetaData.create_all / drop_all (which
probe tables with DESCRIBE), CRUD through a Session, transactions rolled back by
the session, a one-to-many relationship loaded through a join, and Core
statements with bound parameters.

The relationship stands on a real FOREIGN KEY constraint: create_all / drop_all
order the tables by it, an orphan row is 1452 and deleting a referenced parent
1451 (IntegrityError both), and reflection reads the constraint back from SHOW
CREATE TABLE. SAVEPOINT (Session.begin_nested) works.
Reflection (inspect().get_columns) works: SQLAlchemy's MySQL dialect reads
SHOW CREATE TABLE, not information_schema.
"""

import datetime
import decimal

import pytest
import sqlalchemy
from sqlalchemy import (
    BigInteger,
    Date,
    DateTime,
    ForeignKey,
    LargeBinary,
    Numeric,
    String,
    create_engine,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    selectinload,
)

TEXT = "héllo wörld – 日本語 🚀🦀"


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "author"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    born: Mapped[datetime.date | None] = mapped_column(Date)
    books: Mapped[list["Book"]] = relationship(back_populates="author", order_by="Book.id")


class Book(Base):
    __tablename__ = "book"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("author.id"), index=True)
    title: Mapped[str] = mapped_column(String(200))
    price: Mapped[decimal.Decimal | None] = mapped_column(Numeric(10, 2))
    added: Mapped[datetime.datetime | None] = mapped_column(DateTime)
    cover: Mapped[bytes | None] = mapped_column(LargeBinary)
    author: Mapped[Author] = relationship(back_populates="books")


@pytest.fixture
def engine(params, dbname):
    url = sqlalchemy.engine.URL.create(
        "mysql+pymysql",
        username=params["user"],
        password=params["password"],
        host=params["host"],
        port=params["port"],
        database=dbname,
        query={"charset": "utf8mb4"},
    )
    eng = create_engine(url)
    Base.metadata.create_all(eng)
    yield eng
    Base.metadata.drop_all(eng)
    eng.dispose()


def test_create_all_is_idempotent(engine):
    # A second create_all finds the tables (DESCRIBE succeeds) and creates nothing.
    Base.metadata.create_all(engine)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Author)).scalar_one() == 0
        assert conn.dialect.server_version_info >= (8, 0)


def test_crud(engine):
    with Session(engine) as s:
        a = Author(name=TEXT, born=datetime.date(1970, 1, 2))
        a.books = [
            Book(
                title="first",
                price=decimal.Decimal("12.50"),
                added=datetime.datetime(2024, 2, 29, 13, 14, 15),
                cover=bytes(range(256)),
            ),
            Book(title="second"),
        ]
        s.add(a)
        s.commit()
        assert a.id == 1
        assert [b.id for b in a.books] == [1, 2]

    with Session(engine) as s:
        a = s.scalars(select(Author).where(Author.name == TEXT)).one()
        assert a.born == datetime.date(1970, 1, 2)
        first, second = a.books
        assert first.price == decimal.Decimal("12.50")
        assert first.added == datetime.datetime(2024, 2, 29, 13, 14, 15)
        assert first.cover == bytes(range(256))
        assert second.price is None and second.added is None and second.cover is None

        second.title = "second, revised"
        s.commit()
        assert s.get(Book, 2).title == "second, revised"

        s.delete(second)
        s.commit()
        assert s.scalars(select(Book.id)).all() == [1]

    # Core: bulk insert with executemany, UPDATE rowcount.
    with engine.begin() as conn:
        conn.execute(
            insert(Book),
            [{"author_id": 1, "title": f"bulk {k}", "price": decimal.Decimal(k)} for k in range(5)],
        )
        r = conn.execute(update(Book).where(Book.title.like("bulk%")).values(price=1))
        assert r.rowcount == 5
        total = conn.execute(select(func.sum(Book.price)).where(Book.title.like("bulk%"))).scalar_one()
        assert total == decimal.Decimal("5.00")


def test_rollback(engine):
    with Session(engine) as s:
        s.add(Author(name="kept"))
        s.commit()

    with Session(engine) as s:
        s.add(Author(name="discarded"))
        s.flush()  # the INSERT is sent, inside the session's transaction
        assert s.scalar(select(func.count()).select_from(Author)) == 2
        s.rollback()
        assert s.scalars(select(Author.name)).all() == ["kept"]

    # A failed flush (duplicate key) rolls the session back and leaves it usable.
    with Session(engine) as s:
        s.add(Author(name="kept"))
        with pytest.raises(IntegrityError) as e:
            s.commit()
        assert e.value.orig.args[0] == 1062
        s.rollback()
        assert s.scalar(select(func.count()).select_from(Author)) == 1

    # SAVEPOINT (Session.begin_nested): the nested block's writes are rolled
    # back to the savepoint, the outer transaction's kept.
    with Session(engine) as s:
        s.add(Author(name="outer"))
        nested = s.begin_nested()
        s.add(Author(name="in savepoint"))
        s.flush()
        nested.rollback()
        with s.begin_nested():
            s.add(Author(name="released"))
        s.commit()
        assert sorted(s.scalars(select(Author.name)).all()) == ["kept", "outer", "released"]


def test_relationship_join(engine):
    with Session(engine) as s:
        for name, titles in [("ann", ["a1", "a2"]), ("bob", ["b1"]), ("cy", [])]:
            s.add(Author(name=name, books=[Book(title=t, price=decimal.Decimal("1.25")) for t in titles]))
        s.commit()

    with Session(engine) as s:
        rows = s.execute(
            select(Author.name, Book.title).join(Author.books).order_by(Author.name, Book.title)
        ).all()
        assert [tuple(r) for r in rows] == [("ann", "a1"), ("ann", "a2"), ("bob", "b1")]

        rows = s.execute(
            select(Author.name, func.count(Book.id), func.sum(Book.price))
            .outerjoin(Author.books)
            .group_by(Author.name)
            .order_by(Author.name)
        ).all()
        assert [tuple(r) for r in rows] == [
            ("ann", 2, decimal.Decimal("2.50")),
            ("bob", 1, decimal.Decimal("1.25")),
            ("cy", 0, None),
        ]

        authors = s.scalars(select(Author).options(selectinload(Author.books)).order_by(Author.id)).all()
        assert [[b.title for b in a.books] for a in authors] == [["a1", "a2"], ["b1"], []]

        book = s.scalars(select(Book).join(Book.author).where(Author.name == "bob")).one()
        assert book.author.name == "bob"

        n = s.execute(text("SELECT COUNT(*) FROM book WHERE price > :p"), {"p": 1}).scalar_one()
        assert n == 3


def test_foreign_key_constraint_enforced(engine):
    with Session(engine) as s:
        s.add(Author(name="parent", books=[Book(title="child")]))
        s.commit()

    # A book whose author does not exist: 1452, the session usable after.
    with Session(engine) as s:
        s.add(Book(author_id=999, title="orphan"))
        with pytest.raises(IntegrityError) as e:
            s.commit()
        assert e.value.orig.args[0] == 1452
        s.rollback()

    # Deleting an author who still has books (NO ACTION): 1451.
    with engine.connect() as conn:
        with pytest.raises(IntegrityError) as e:
            conn.execute(text("DELETE FROM author WHERE name = 'parent'"))
        assert e.value.orig.args[0] == 1451
        conn.rollback()

    fks = inspect(engine).get_foreign_keys("book")
    assert [(f["constrained_columns"], f["referred_table"], f["referred_columns"]) for f in fks] == [
        (["author_id"], "author", ["id"])
    ]


def test_reflection(engine):
    try:
        cols = inspect(engine).get_columns("book")
    except sqlalchemy.exc.SQLAlchemyError as err:
        if "information_schema" in str(err).lower():
            pytest.skip(f"reflection needs information_schema (in progress): {err}")
        raise
    assert [c["name"] for c in cols] == ["id", "author_id", "title", "price", "added", "cover"]

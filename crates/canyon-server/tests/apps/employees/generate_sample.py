# Synthetic small data for datacharmer/test_db's employees schema (the
# original dumps are ~160 MB): deterministic, 24 managers of load_dept_manager.dump
# plus 36 staff, so every view, function and procedure has rows to work on.
import random, datetime
rnd = random.Random(29)
first = ['Georgi','Bezalel','Parto','Chirstian','Kyoichi','Anneke','Tzvetan','Saniya','Sumant','Duangkaew',
         'Mary','Patricio','Eberhardt','Berni','Guoxiang','Kazuhito','Cristinel','Kazuhide','Lillian','Mayuko']
last = ['Facello','Simmel','Bamford','Koblick','Maliniak','Preusig','Zielinski','Kalloufi','Peac','Piveteau',
        'Sluis','Bridgland','Terkki','Genin','Nooteboom','Cappelletti','Bouloucos','Peha','Haddadi','Warwick']
mgr = [110022,110039,110085,110114,110183,110228,110303,110344,110386,110420,110511,110567,110725,110765,
       110800,110854,111035,111133,111400,111534,111692,111784,111877,111939]
mgr_dept = {}
for ln in open('load_dept_manager.dump'):
    if ln.startswith('('):
        e, d = ln[1:].split(',')[:2]; mgr_dept[int(e)] = d.strip("'")
emps = mgr + list(range(10001, 10037))
def day(y0, y1):
    d0 = datetime.date(y0, 1, 1).toordinal()
    return datetime.date.fromordinal(rnd.randrange(d0, datetime.date(y1, 1, 1).toordinal()))
E, DE, T, S = [], [], [], []
for e in emps:
    hire = day(1985, 1990)
    E.append(f"({e},'{day(1952, 1965)}','{rnd.choice(first)}','{rnd.choice(last)}','{rnd.choice('MF')}','{hire}')")
    if e in mgr_dept:
        DE.append(f"({e},'{mgr_dept[e]}','{hire}','9999-01-01')")
        T.append(f"({e},'Manager','{hire}','9999-01-01')")
    else:
        d = 'd%03d' % rnd.randint(1, 9)
        if e % 4 == 0:   # moved once: two rows, the later one current
            moved = day(1991, 1998)
            d2 = 'd%03d' % (int(d[1:]) % 9 + 1)
            DE.append(f"({e},'{d}','{hire}','{moved}')")
            DE.append(f"({e},'{d2}','{moved}','9999-01-01')")
        else:
            DE.append(f"({e},'{d}','{hire}','9999-01-01')")
        t = rnd.choice(['Staff', 'Engineer', 'Senior Engineer', 'Assistant Engineer', 'Technique Leader'])
        T.append(f"({e},'{t}','{hire}',{'NULL' if e % 7 == 0 else repr('9999-01-01')})")
    sal, start = rnd.randint(38000, 60000), hire
    while start.year < 2002:
        end = start.replace(year=start.year + 1)
        S.append(f"({e},{sal},'{start}','{end if end.year < 2002 else datetime.date(9999,1,1)}')")
        sal += rnd.randint(0, 3000); start = end
def write(name, table, rows):
    with open(name, 'w') as f:
        f.write(f"INSERT INTO `{table}` VALUES " + ',\n'.join(rows) + ';\n')
write('load_employees.dump', 'employees', E)
write('load_dept_emp.dump', 'dept_emp', DE)
write('load_titles.dump', 'titles', T)
n = len(S) // 3
write('load_salaries1.dump', 'salaries', S[:n])
write('load_salaries2.dump', 'salaries', S[n:2*n])
write('load_salaries3.dump', 'salaries', S[2*n:])
print(len(E), len(DE), len(T), len(S))
